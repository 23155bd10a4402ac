/**
 * Memory of the waiting room: one admission shard's WaitingLine (edge/durable/waiting-line.ts) with
 * 100,000 waiting entries, measured in V8 (the engine workerd runs) as the heap growth after a full
 * GC, and the time one poll takes in such a line. Realistic ids: 64-bit decimal user ids and UUID
 * Idempotency-Keys. Then a line served as a sale serves it: the same number of buyers joined at once,
 * each polling when told and buying at its turn, for 30 s of the line's clock: the time per call, with
 * the turns handed out and the sweeps it causes, while turns wait for their poll (at this rate and
 * poll budget tens of thousands are admitted at once).
 * `node --expose-gc --import tsx bench/waiting-room-memory.ts [entries]`.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { WaitingLine } from '../edge/durable/waiting-line.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error('run with node --expose-gc');
  process.exit(2);
}
const entries = Number(process.argv[2] ?? 100_000);
const limits = { ratePerSec: 1_250, pollMinMs: 1_000, pollBudgetPerSec: 500 };
gc();
const before = process.memoryUsage().heapUsed;
const line = new WaitingLine();
// An empty bucket: every entry waits.
line.grant(limits.ratePerSec, limits, 0);
let lastUser = '';
for (let i = 0; i < entries; i++) {
  // The ids are made here, so the growth counts the strings the line keeps alive (a user id and the
  // Idempotency-Key per entry), as a real shard does once the request that brought them is gone.
  lastUser = String(randomInt(1, 2 ** 47) * 1000 + randomInt(0, 1000)); // a 64-bit-range decimal id, flat
  // A header value arrives as a flat string (Node's randomUUID() keeps a 0.5 KB buffer alive per string).
  const requestId = Buffer.from(randomUUID()).toString('latin1');
  line.enter({ userId: lastUser, requestId, quantity: 1 }, 1, limits, 0);
}
gc();
const after = process.memoryUsage().heapUsed;
const perEntry = (after - before) / entries;

// One poll of the last entry (binary search + ETA), averaged; the clock stands still so nothing is admitted.
const rounds = 20_000;
let t = process.hrtime.bigint();
for (let i = 0; i < rounds; i++) line.poll(entries, lastUser, limits, 0);
const pollNs = Number(process.hrtime.bigint() - t) / rounds;
t = process.hrtime.bigint();
// 1.1 s later: the once-a-second sweep over the whole line, and 1,375 turns handed out.
line.poll(entries, lastUser, limits, 1_100);
const sweepMs = Number(process.hrtime.bigint() - t) / 1e6;

/** Buyers join at 0, poll when told (a turn's purchase finishes at once) for 30 s; µs per call (one thread, nothing else running: its CPU). */
function servedAsTold(n: number) {
  const served = new WaitingLine();
  served.grant(limits.ratePerSec, limits, 0);
  const dueAt = new Map<number, number[]>();
  const at = (t: number, seq: number) => {
    const list = dueAt.get(t);
    if (list) list.push(seq);
    else dueAt.set(t, [seq]);
  };
  const user = (seq: number) => String(1_000_000 + seq);
  for (let seq = 1; seq <= n; seq++) {
    const a = served.enter({ userId: user(seq), requestId: `k${seq}`, quantity: 1 }, 1, limits, 0);
    if (a.kind === 'waiting') at(a.pollAfterMs, seq);
  }
  let calls = 0;
  let mostAdmitted = 0;
  const started = process.hrtime.bigint();
  for (let now = 1; now <= 30_000; now++) {
    const due = dueAt.get(now);
    if (!due) continue;
    dueAt.delete(now);
    for (const seq of due) {
      const a = served.poll(seq, user(seq), limits, now);
      calls++;
      if (a.kind === 'waiting') at(now + a.pollAfterMs, seq);
      else if (a.kind === 'too_soon') at(now + a.retryAfterMs, seq);
      else if (a.kind === 'turn') served.finish(seq, user(seq), { reservationId: `r${seq}` }, now);
    }
    mostAdmitted = Math.max(mostAdmitted, served.figuresAt(now).turnsPending);
  }
  const perCallUs = Number(process.hrtime.bigint() - started) / 1000 / Math.max(1, calls);
  return { calls, mostAdmitted, microsecondsPerCall: Math.round(perCallUs * 10) / 10 };
}
const served = servedAsTold(entries);

console.log(
  JSON.stringify(
    {
      entries,
      waiting: line.waitingCount,
      heapGrowthBytes: after - before,
      bytesPerEntry: Math.round(perEntry),
      pollMicroseconds: Math.round(pollNs / 100) / 10,
      sweepAndAdmitMs: Math.round(sweepMs * 10) / 10,
      servedAsTold: served,
    },
    null,
    2,
  ),
);
