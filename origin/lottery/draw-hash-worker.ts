/**
 * A draw hashing worker (worker_threads; started and stopped by draw-hash-threads.ts): hashes the
 * pages of the closed list it is sent, one pass at a time, with the same code as the main thread
 * (draw-page-hash.ts). A message it does not understand ends it with an error, which fails the draw.
 */
import { parentPort } from 'node:worker_threads';
import { DigestLines, SharedCut, TicketPicker, type HashReply, type HashRequest } from './draw-page-hash.js';

const port = parentPort;
if (!port) throw new Error('draw-hash-worker runs as a worker thread');

let lines: DigestLines | null = null;
let picker: TicketPicker | null = null;

const answer = (reply: HashReply, transfer: ArrayBuffer[] = []) => port.postMessage(reply, transfer);

port.on('message', (m: HashRequest) => {
  switch (m.kind) {
    case 'digest':
      lines = new DigestLines(m.seed);
      picker = null;
      return;
    case 'select':
      picker = new TicketPicker(m.seed, m.digest, m.capacity, m.after, new SharedCut(m.cutSlots, m.cutSlot));
      lines = null;
      return;
    case 'page':
      if (lines) {
        const { bytes, length } = lines.of(m.page);
        return answer({ kind: 'lines', bytes, length }, [bytes.buffer as ArrayBuffer]);
      }
      if (!picker) throw new Error('draw-hash-worker: a page before any pass');
      picker.add(m.page, m.first);
      return answer({ kind: 'picked' });
    case 'kept': {
      if (!picker) throw new Error('draw-hash-worker: kept before a selection pass');
      const kept = picker.selection.kept();
      picker = null;
      const buffers = [kept.tickets, kept.entrants, kept.quantities, kept.entries].map((a) => a.buffer as ArrayBuffer);
      return answer({ kind: 'kept', kept }, buffers);
    }
    default:
      throw new Error(`draw-hash-worker: unknown request ${JSON.stringify(m)}`);
  }
});
