/** Baseline: a bare node:http server answering a constant JSON body — the ceiling for any Node origin. */
import { createServer } from 'node:http';

const body = JSON.stringify({ status: 'queued', reservationId: '1-00000000000000000000000000000000' });
createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(202, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
