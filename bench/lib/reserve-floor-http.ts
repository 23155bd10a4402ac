/**
 * The reserve path's floor: a bare node:http server that runs, per request, the one EVALSHA a
 * reserve runs — lua/reserve-6.lua as the origin's script loader reads and registers it
 * (origin/redis/scripts/load.ts), its KEYS and ARGV laid out by the origin's own script module
 * (origin/redis/scripts/reserve.ts) for the body's user — and answers a constant 202. No signature
 * check, no routing, no validation, no breaker, no metrics: the cheapest Node program that makes
 * the same decision in Redis. A script error or a refusal answers 500, so the load tool counts it;
 * a request without a body (a readiness probe) 200.
 *
 *   PORT, REDIS_URL, ACTIVITY_ID, SKU_ID (a warmed sale with one bucket)
 */
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import { newReservationId } from '../../contract/ids.js';
import { activityKeys } from '../../origin/redis/keys.js';
import { defineScripts } from '../../origin/redis/scripts/load.js';
import { ReplyCode } from '../../origin/redis/scripts/reply-codes.js';
import { reserveScript } from '../../origin/redis/scripts/reserve.js';

const { PORT, REDIS_URL, ACTIVITY_ID, SKU_ID } = process.env;
if (!PORT || !ACTIVITY_ID || !SKU_ID) throw new Error('reserve floor needs PORT, ACTIVITY_ID and SKU_ID');

const redis = new Redis(REDIS_URL ?? 'redis://127.0.0.1:6379');
const reserve = defineScripts(redis).reserve;
const keys = reserveScript.keys(activityKeys(ACTIVITY_ID, SKU_ID));
const body = JSON.stringify({ status: 'queued', reservationId: '1-00000000000000000000000000000000' });

createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    // A request without a body (the readiness probe's GET) is answered at once.
    if (chunks.length === 0) return void res.writeHead(200).end();
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      userId: string;
      quantity: number;
      requestId: string;
      traceId?: string;
    };
    reserve(
      keys,
      reserveScript.args({
        userId: input.userId,
        quantity: input.quantity,
        reservationId: newReservationId(ACTIVITY_ID),
        requestId: input.requestId,
        traceId: input.traceId ?? '',
        now: Date.now(),
        mayBorrow: false,
        checkEligibility: true,
      }),
    ).then(
      (reply) => {
        if (Number(reply[0]) !== ReplyCode.DONE) return void res.writeHead(500).end();
        res.writeHead(202, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
      () => void res.writeHead(500).end(),
    );
  });
}).listen(Number(PORT), '127.0.0.1');
