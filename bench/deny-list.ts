/**
 * Deny-list cost (docs/design.md §10: bounded and cheap per request with 100k denied users).
 *
 * 1. Memory and lookup of the structure each UserGateDO shard holds (a Set of user-id strings), in
 *    V8 — the engine workerd runs — for 100k ids in one Set and spread over 16 shards.
 * 2. Through the real edge (Miniflare, workerd's own socket, a stand-in origin): ticket issuance
 *    with 0 denied users, then after pushing 100k denied users (how long the pushes took), for
 *    allowed users and for denied ones (403). Figures, not assertions.
 *
 *   node --expose-gc --import tsx bench/deny-list.ts [--connections 20] [--seconds 5] [--denied 100000]
 *   npm run bench -- deny-list
 */
import autocannon from 'autocannon';
import { openSnapshot } from '../support/edge-calls.js';
import { bearerFor, startBenchEdge } from './lib/bench-edge.js';
import { benchOptions, runAsScript } from './lib/cli.js';

const options = benchOptions({ numbers: { connections: 20, seconds: 5, denied: 100_000 } });
const connections = options.connections;
const duration = options.seconds;
const deniedCount = options.denied;
const SHARDS = 16;
const PUSH_BATCH = 500;

const userId = (i: number) => String(20_000_000_000 + i * 7919);

export interface DenyListRun {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  expected: number;
  other: number;
}

export interface DenyListResult {
  denied: number;
  /** V8 heap per denied id in a Set (null without --expose-gc). */
  bytesPerId: number | null;
  lookupNs: number;
  pushSeconds: number;
  originCalls: number;
  runs: DenyListRun[];
}

function memoryAndLookup(): { bytesPerId: number | null; lookupNs: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  const heap = () => {
    gc?.();
    return process.memoryUsage().heapUsed;
  };
  const before = heap();
  const one = new Set<string>();
  for (let i = 0; i < deniedCount; i++) one.add(userId(i));
  const oneBytes = heap() - before;
  const shards = Array.from({ length: SHARDS }, () => new Set<string>());
  const before16 = heap();
  for (let i = 0; i < deniedCount; i++) shards[i % SHARDS]!.add(userId(i));
  const shardBytes = heap() - before16;
  // Referenced here so neither measurement sees the other's Set collected.
  if (one.size + shards.reduce((n, s) => n + s.size, 0) !== 2 * deniedCount) throw new Error('set sizes');

  const probes = Array.from({ length: 1_000_000 }, (_, i) => userId(i % (deniedCount * 2)));
  let hits = 0;
  const started = process.hrtime.bigint();
  for (const p of probes) if (shards[0]!.has(p)) hits++;
  const ns = Number(process.hrtime.bigint() - started) / probes.length;
  console.log(
    `memory: ${deniedCount} ids in one Set ≈ ${(oneBytes / 1e6).toFixed(1)} MB (${Math.round(oneBytes / deniedCount)} B/id)` +
      (gc
        ? `; over ${SHARDS} shards ≈ ${(shardBytes / SHARDS / 1e6).toFixed(2)} MB per shard`
        : ' (approximate: run with --expose-gc for exact figures and the per-shard figure)'),
  );
  console.log(`lookup: Set.has ≈ ${ns.toFixed(0)} ns per request (1M lookups, ${hits} hits)`);
  return { bytesPerId: gc ? Math.round(oneBytes / deniedCount) : null, lookupNs: Math.round(ns) };
}

export async function benchDenyList(): Promise<DenyListResult> {
  const memory = memoryAndLookup();
  const stage = await startBenchEdge();
  const { edge, origin } = stage;
  const runs: DenyListRun[] = [];
  const activityId = '710001';
  // High enough that no ticket is rate-limited: the run measures the gate call and the deny lookup.
  await stage.push(openSnapshot(activityId, { title: 'deny-list bench', userRatePerSec: 100 }));

  // Allowed users are ids the deny list never holds (odd offsets).
  const allowed = Array.from({ length: 2000 }, (_, i) => bearerFor(String(30_000_000 + i)));
  const denied = Array.from({ length: 2000 }, (_, i) => bearerFor(userId(i)));

  async function run(name: string, auth: string[], expected: number) {
    let next = 0;
    let ok = 0;
    let other = 0;
    const instance = autocannon({
      url: edge.url,
      connections,
      duration,
      requests: [
        {
          method: 'POST',
          path: `/api/activities/${activityId}/tickets`,
          setupRequest: (req: autocannon.Request) => ({
            ...req,
            headers: { authorization: auth[next++ % auth.length]! },
          }),
        },
      ],
    }) as unknown as autocannon.Instance & Promise<autocannon.Result>;
    // on() returns the instance itself, which is awaited below.
    void instance.on('response', (_c: unknown, status: number) => (status === expected ? ok++ : other++));
    const r = await instance;
    runs.push({ name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, expected: ok, other });
    console.log(
      `${name.padEnd(34)} ${r.requests.average.toFixed(0).padStart(6)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  ${expected}: ${ok}  other: ${other}`,
    );
  }

  await run('tickets, 0 denied users', allowed, 200);
  const started = Date.now();
  for (let i = 0; i < deniedCount; i += PUSH_BATCH) {
    const users = Array.from({ length: Math.min(PUSH_BATCH, deniedCount - i) }, (_, j) => ({
      userId: userId(i + j),
      denied: true,
      revision: 1,
    }));
    await stage.put('/internal/deny', JSON.stringify({ users }));
  }
  const pushSeconds = (Date.now() - started) / 1000;
  console.log(`pushed ${deniedCount} denied users in ${pushSeconds.toFixed(1)} s (batches of ${PUSH_BATCH})`);
  await run(`tickets, ${deniedCount} denied, allowed user`, allowed, 200);
  await run(`tickets, ${deniedCount} denied, denied user`, denied, 403);
  const calls = origin.calls(activityId);
  const originCalls = calls.total;
  // Tickets never reach the origin; the edge reads the activity's snapshot from it once (through the
  // ActivityDO) when it first meets the activity.
  console.log(
    `origin calls during the runs: ${originCalls} (activity reads ${calls.activity}, reserve ${calls.reserve}, reservation ${calls.reservation})`,
  );
  await stage.stop();
  return { denied: deniedCount, ...memory, pushSeconds, originCalls, runs };
}

runAsScript(import.meta.url, benchDenyList);
