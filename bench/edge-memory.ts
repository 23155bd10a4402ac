/**
 * Edge memory and throughput as the crowd grows: distinct users, each with its own JWT, take a
 * ticket and buy once (then click again: a 429 from the isolate's memory) through the real edge
 * Worker (Miniflare, workerd's own socket) against a stand-in origin. Every `--step` users it prints
 * the edge workerd's RSS and the request rate of that step, so memory per user and a rate that falls
 * with the crowd both show.
 *
 *   npx tsx bench/edge-memory.ts [--users 100000] [--step 10000] [--concurrency 32]
 *   node --expose-gc --import tsx bench/edge-memory.ts --structures [--entries 50000]
 *
 * `--structures` measures, in V8 (the engine workerd runs), the bytes per entry of each per-user
 * structure the edge keeps — the isolate's verified-token and refusal caches, a UserGateDO bucket —
 * as heap growth after a full GC, with realistic keys, and the most each can hold (its bound).
 *
 * RSS is the whole workerd process (isolate, Durable Objects, runtime), read from /proc (Linux).
 */
import { take, type Bucket } from '../edge/durable/token-bucket.js';
import { TtlCache } from '../edge/ttl-cache.js';
import { openSnapshot } from '../support/edge-calls.js';
import { startBenchEdge } from './lib/bench-edge.js';
import { benchOptions, runAsScript } from './lib/cli.js';
import { workerdRssMb } from './lib/proc.js';
import { BENCH_EDGE_SECRETS } from './lib/stack.js';
import { tokenMinter } from './rehearsal/jwt.js';

const options = benchOptions({
  numbers: { users: 100_000, step: 10_000, concurrency: 32, entries: 50_000 },
  flags: ['structures'],
});
const userCount = options.users;
const step = options.step;
const concurrency = options.concurrency;

async function main() {
  const stage = await startBenchEdge();
  const { edge } = stage;
  try {
    const activityId = '710001';
    await stage.push(openSnapshot(activityId, { title: 'memory bench' }));

    const mint = tokenMinter(BENCH_EDGE_SECRETS.USER_TOKEN_SECRET, 3600);
    const statuses: Record<string, number> = {};
    const count = (s: number) => (statuses[s] = (statuses[s] ?? 0) + 1);
    let next = 0;
    let requests = 0;
    const oneUser = async (i: number) => {
      const authorization = `Bearer ${mint(String(20_000_000 + i))}`;
      const t = await fetch(`${edge.url}/api/activities/${activityId}/tickets`, {
        method: 'POST',
        headers: { authorization },
      });
      count(t.status);
      requests++;
      if (t.status !== 200) return void (await t.arrayBuffer());
      const { purchaseUrl } = (await t.json()) as { purchaseUrl: string };
      for (const key of ['buy', 'again']) {
        const p = await fetch(`${edge.url}${purchaseUrl}`, {
          method: 'POST',
          headers: { authorization, 'idempotency-key': `${key}-${i}`, 'content-type': 'application/json' },
          body: '{"quantity":1}',
        });
        count(p.status);
        requests++;
        await p.arrayBuffer();
      }
    };

    const startRss = workerdRssMb();
    console.log(
      `edge-memory: ${userCount} users, ${concurrency} in flight; workerd RSS at start ${startRss.toFixed(0)} MB`,
    );
    console.log('users     RSS MB  +KB/user (step)  req/s (step)');
    let stepStarted = Date.now();
    let stepRequests = 0;
    let lastRss = startRss;
    let reported = 0;
    const rows: { users: number; rssMb: number; kbPerUserStep: number; rps: number }[] = [];
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= userCount) return;
        await oneUser(i);
        const done = i + 1;
        if (done % step === 0 && done > reported) {
          reported = done;
          const rss = workerdRssMb();
          const now = Date.now();
          const rps = ((requests - stepRequests) * 1000) / (now - stepStarted);
          const row = { users: done, rssMb: rss, kbPerUserStep: ((rss - lastRss) * 1024) / step, rps };
          rows.push(row);
          console.log(
            `${String(done).padEnd(8)}  ${rss.toFixed(0).padStart(6)}  ${row.kbPerUserStep.toFixed(2).padStart(15)}  ${rps.toFixed(0).padStart(12)}`,
          );
          lastRss = rss;
          stepStarted = now;
          stepRequests = requests;
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const endRss = workerdRssMb();
    console.log(
      `workerd RSS ${startRss.toFixed(0)} → ${endRss.toFixed(0)} MB: ${(((endRss - startRss) * 1024) / userCount).toFixed(2)} KB per user; statuses ${JSON.stringify(statuses)}`,
    );
    return { startRssMb: startRss, endRssMb: endRss, rows, statuses };
  } finally {
    await stage.stop();
  }
}

// The bounds of edge/auth.ts (MAX_VERIFIED_TOKENS) and edge/gates.ts (REFUSED_MAX_ENTRIES); those
// modules need the Worker's types, so they are restated here.
const MAX_VERIFIED_TOKENS = 50_000;
const REFUSED_MAX_ENTRIES = 50_000;

/** Heap bytes per entry of each per-user structure, measured one at a time (see `--structures`). */
function structures(entries: number) {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc --import tsx');
  const mint = tokenMinter(BENCH_EDGE_SECRETS.USER_TOKEN_SECRET, 3600);
  // Strings as they arrive in workerd: flat copies, not slices of something bigger.
  const flat = (s: string) => Buffer.from(s).toString('latin1');
  const measure = (name: string, bound: string, fill: (i: number) => void, keep: () => unknown) => {
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < entries; i++) fill(i);
    gc();
    const bytes = (process.memoryUsage().heapUsed - before) / entries;
    console.log(`${name.padEnd(44)} ${bytes.toFixed(0).padStart(6)} B/entry   ${bound}`);
    void keep();
  };
  const userOf = (i: number) => String(1_000_000_000_000 + i * 7919);
  console.log(`per-user structures, ${entries} entries each (heap growth after a full GC, V8 ${process.versions.v8})`);
  const tokens = new TtlCache<{ userId: string; claims: Record<string, unknown> }>(entries + 1);
  measure(
    'isolate: verified token (auth.ts)',
    `bound ${MAX_VERIFIED_TOKENS.toLocaleString('en')} entries, 60 s`,
    (i) => {
      const userId = userOf(i);
      const token = flat(mint(userId));
      tokens.set(token, { userId, claims: JSON.parse(flat(`{"sub":"${userId}","exp":1900000000}`)) }, Infinity, 0);
    },
    () => tokens.size,
  );
  const refused = new TtlCache<{ until: number; ratePerSec: number }>(entries + 1);
  measure(
    'isolate: refusal memory (gates.ts)',
    `bound ${REFUSED_MAX_ENTRIES.toLocaleString('en')} entries, until the next token`,
    (i) => refused.set(flat(`purchase:700001:${userOf(i)}`), { until: 1_000 + i, ratePerSec: 1 }, Infinity, 0),
    () => refused.size,
  );
  const buckets = new Map<string, Bucket>();
  measure(
    'UserGateDO: one bucket (user-gate.ts)',
    'pruned once refilled (1 s at 1/s), swept every 10 s',
    (i) => {
      const t = take(undefined, 1, { ratePerSec: 1, capacity: 1 }, 1_000 + i);
      if (t.ok) buckets.set(flat(`purchase:700001:${userOf(i)}`), t.bucket);
    },
    () => buckets.size,
  );
}

runAsScript(import.meta.url, async () => (options.structures ? structures(options.entries) : main()));
