/**
 * Cost of the persisted waiting line (goal: at most 1.2× the in-memory line per join and per
 * poll), measured in one run against the in-memory line.
 *
 * workerd (Miniflare, SQLite-backed Durable Objects on local disk) runs bench/worker/waiting-line-worker.ts:
 * the real AdmissionDO with its line in storage, joins written before their answer (`sync`, the
 * default) or with the next batch (`batched`), and the same class with storage off (`memory`, the line
 * as before). For each, in turns (memory, sync, batched; `--rounds` times, the median kept):
 *   - join: `--joins` buyers take a place in a fresh shard, in requests of `--batch` concurrent
 *     `enter` calls, `--in-flight` requests at a time;
 *   - poll: `--pollers` buyers take a place in another fresh shard (not counted), then for
 *     `--poll-seconds` each polls as told (at pollAfterMs, as the sale page does), in requests of up
 *     to `--batch` `poll` calls, until its turn. The line (50/s, pollAfterMs ≥ 1 s: the first 100 poll
 *     every second, the others at half their ETA) polls about 500 times a second, and lasts 80 s, so a
 *     slow join on a loaded machine does not empty it before the counted window.
 * Each run of a variant has a workerd of its own (so no earlier run's line is still timing out and
 * being written while it is measured); its idle CPU (2 s with nothing asked) is taken off each phase.
 * Cost = workerd CPU time (user + system, /proc) per call, including the batch writes of changed
 * entries (each phase ends after one WAITING_LINE_FLUSH_MS more). Calls reach the shard through one
 * Worker request per batch, so the HTTP cost per call is small and the same in every variant.
 * Local storage is a file on this machine's disk, not Cloudflare's replicated storage: the CPU
 * figures compare like with like; the join latency of `sync` in production includes the replication.
 *
 *   node --import tsx bench/waiting-line.ts [--joins 5000] [--poll-seconds 4] [--rounds 3]
 *   npm run bench -- waiting-line
 */
import { Miniflare } from 'miniflare';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { bundleWorker, COMPATIBILITY_DATE } from '../support/local-edge.js';
import { benchOptions, runAsScript } from './lib/cli.js';
import { workerdCpuMs } from './lib/proc.js';
import { BENCH_EDGE_SECRETS } from './lib/stack.js';

const options = benchOptions({
  numbers: {
    joins: 5000,
    pollers: 4000,
    'poll-seconds': 6,
    rounds: 3,
    batch: 50,
    'in-flight': 4,
    'join-group-ms': 2,
  },
  strict: false,
});
const JOINS = options.joins;
const POLLERS = options.pollers;
const POLL_MS = options['poll-seconds'] * 1000;
const ROUNDS = options.rounds;
const BATCH = options.batch;
const IN_FLIGHT = options['in-flight'];
/** A slow line (the poll phase sees few turns), polled at the default pollMinMs; k = 0.5 (see waiting-line.ts). */
const LIMITS = { ratePerSec: 50, pollMinMs: 1_000, pollBudgetPerSec: 5_000 };
const FLUSH_MS = 200;
const IDLE_MS = 2_000;
const VARIANTS = ['memory', 'sync', 'batched'] as const;
type Variant = (typeof VARIANTS)[number];
const BINDING: Record<Variant, string> = { memory: 'MEMORY', sync: 'SYNC', batched: 'BATCHED' };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fresh workerd (its own storage directory) running the bundled bench Worker. */
async function startWorker(scriptPath: string, dir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    cf: false,
    // Storage on disk, as a deployed object's is (not the in-memory default).
    durableObjectsPersist: mkdtempSync(join(dir, 'do-')),
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
      stdout.resume();
      stderr.pipe(process.stderr);
    },
    workers: [
      {
        name: 'waiting-line-bench',
        modules: true,
        scriptPath,
        modulesRoot: dir,
        compatibilityDate: COMPATIBILITY_DATE,
        bindings: {
          ...BENCH_EDGE_SECRETS,
          ORIGIN_URL: 'http://127.0.0.1:9',
          WAITING_LINE_FLUSH_MS: String(FLUSH_MS),
          WAITING_JOIN_WRITE: 'sync',
          WAITING_JOIN_GROUP_MS: String(options['join-group-ms']),
        },
        durableObjects: {
          SYNC: { className: 'AdmissionDO', useSQLite: true },
          BATCHED: { className: 'BatchedAdmissionDO', useSQLite: true },
          MEMORY: { className: 'MemoryAdmissionDO', useSQLite: true },
        },
      },
    ],
  });
  const url = (await mf.ready).toString().replace(/\/$/, '');
  return { url, stop: () => mf.dispose() };
}

interface Place {
  userId: string;
  epoch: string;
  seq: number;
  dueAt: number;
}

async function call(url: string, variant: Variant, op: 'join' | 'poll', shard: string, body: unknown[]) {
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(`${url}/${BINDING[variant]}/${op}?shard=${shard}`, {
        method: 'POST',
        body: JSON.stringify(body),
      });
    } catch (err) {
      // A loaded machine sometimes resets a keep-alive socket; the calls are idempotent (a repeat join
      // answers the same place; a repeat poll is paced), so send them again.
      if (attempt >= 3) throw err;
      await sleep(50);
      continue;
    }
    if (res.status !== 200) throw new Error(`${variant} ${op}: ${res.status} ${await res.text()}`);
    return (await res.json()) as any[];
  }
}

/**
 * One `op` call per item to `shard`, `BATCH` calls a request and `IN_FLIGHT` requests at a time;
 * `onAnswers` gets each batch with its answers.
 */
async function callInBatches<T>(
  url: string,
  variant: Variant,
  op: 'join' | 'poll',
  shard: string,
  items: T[],
  callOf: (item: T) => unknown,
  onAnswers: (batch: T[], answers: any[]) => void,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const batch = items.slice(next, next + BATCH);
      next += BATCH;
      onAnswers(batch, await call(url, variant, op, shard, batch.map(callOf)));
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

interface PhaseFigures {
  calls: number;
  cpuMs: number;
  wallMs: number;
  cpuUsPerCall: number;
}

const figures = (calls: number, cpuMs: number, wallMs: number): PhaseFigures => ({
  calls,
  cpuMs,
  wallMs,
  cpuUsPerCall: Math.round(((cpuMs * 1000) / Math.max(1, calls)) * 10) / 10,
});

/** `count` buyers take a place in `shard`; returns the waiting ones with when each is told to poll. */
async function joinLine(
  url: string,
  variant: Variant,
  shard: string,
  count: number,
  tag: string,
  onBatch: (joined: Place[]) => void,
): Promise<Place[]> {
  const users = Array.from({ length: count }, (_, i) => `${tag}${String(i).padStart(7, '0')}`);
  const places: Place[] = [];
  const joinOf = (userId: string) => ({ userId, requestId: `k-${userId}`, limits: LIMITS });
  await callInBatches(url, variant, 'join', shard, users, joinOf, (batch, answers) => {
    const now = Date.now();
    const joined: Place[] = [];
    answers.forEach((a, i) => {
      if (a.kind === 'waiting')
        joined.push({ userId: batch[i]!, epoch: a.epoch, seq: a.seq, dueAt: now + a.pollAfterMs });
    });
    places.push(...joined);
    onBatch(joined);
  });
  return places;
}

/** Polls every place when told until `stopped()`; counts the polls answered from `counting()` on. */
async function pollAsTold(
  url: string,
  variant: Variant,
  shard: string,
  places: Place[],
  stopped: () => boolean,
  counting: () => boolean,
) {
  const tally = { polls: 0, turns: 0, gone: 0 };
  let pending = places;
  while (!stopped()) {
    const now = Date.now();
    const due = pending.filter((p) => p.dueAt <= now);
    if (due.length === 0) {
      await sleep(5);
      continue;
    }
    const pollOf = (p: Place) => ({ epoch: p.epoch, seq: p.seq, userId: p.userId, limits: LIMITS });
    await callInBatches(url, variant, 'poll', shard, due, pollOf, (batch, answers) => {
      const at = Date.now();
      const counted = counting();
      if (counted) tally.polls += batch.length;
      answers.forEach((a, i) => {
        const p = batch[i]!;
        if (a.kind === 'waiting') p.dueAt = at + a.pollAfterMs;
        else if (a.kind === 'too_soon') p.dueAt = at + a.retryAfterMs;
        else {
          p.dueAt = Infinity;
          if (!counted) return;
          if (a.kind === 'turn') tally.turns++;
          else tally.gone++;
        }
      });
    });
    pending = pending.filter((p) => p.dueAt !== Infinity);
  }
  return tally;
}

async function runVariant(url: string, variant: Variant, round: number, idleCpuMsPerSec: number) {
  const stamp = Date.now();
  // Join.
  let cpu0 = workerdCpuMs();
  let t0 = Date.now();
  await joinLine(url, variant, `${variant}-${round}-join-${stamp}`, JOINS, `1${round}`, () => {});
  const joinWallMs = Date.now() - t0;
  await sleep(FLUSH_MS + 100);
  const join = figures(JOINS, workerdCpuMs() - cpu0 - (idleCpuMsPerSec * (Date.now() - t0)) / 1000, joinWallMs);

  // A line of POLLERS, each polling as told from its join on; counted for POLL_MS once all have joined.
  const shard = `${variant}-${round}-poll-${stamp}`;
  let stopped = false;
  let counting = false;
  const places: Place[] = [];
  const pollers: Promise<{ polls: number; turns: number; gone: number }>[] = [];
  await joinLine(url, variant, shard, POLLERS, `2${round}`, (joined) => {
    places.push(...joined);
    pollers.push(
      pollAsTold(
        url,
        variant,
        shard,
        joined,
        () => stopped,
        () => counting,
      ),
    );
  });
  await sleep(FLUSH_MS + 100);
  cpu0 = workerdCpuMs();
  t0 = Date.now();
  counting = true;
  await sleep(POLL_MS);
  counting = false;
  const pollWallMs = Date.now() - t0;
  await sleep(FLUSH_MS + 100);
  const cpuMs = workerdCpuMs() - cpu0 - (idleCpuMsPerSec * (Date.now() - t0)) / 1000;
  stopped = true;
  const tallies = await Promise.all(pollers);
  const sum = (k: 'polls' | 'turns' | 'gone') => tallies.reduce((n, t) => n + t[k], 0);
  // Polls answered after the window closed (in flight at its end) are not counted; their CPU is.
  const poll = { ...figures(sum('polls'), cpuMs, pollWallMs), turns: sum('turns'), gone: sum('gone') };
  return { variant, join, poll };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * One counted run of a variant in a workerd of its own: warmed up (code compiled, storage files
 * created), its idle CPU measured, then the join and poll phases. A fresh workerd per run, because
 * the lines of earlier runs live on in their shards: their entries can time out and be written while
 * a later phase is measured, and their garbage is collected then.
 */
async function runInFreshWorker(scriptPath: string, dir: string, variant: Variant, round: number) {
  const worker = await startWorker(scriptPath, dir);
  try {
    await joinLine(worker.url, variant, `${variant}-warm-up`, 500, '9', () => {});
    // workerd's own CPU while nothing is asked of it (timers, the loopback): taken off each phase.
    await sleep(500);
    const idle0 = workerdCpuMs();
    await sleep(IDLE_MS);
    const idleCpuMsPerSec = ((workerdCpuMs() - idle0) * 1000) / IDLE_MS;
    return { ...(await runVariant(worker.url, variant, round, idleCpuMsPerSec)), idleCpuMsPerSec };
  } finally {
    await worker.stop();
  }
}

export async function benchWaitingLine() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-line-'));
  const runs: Awaited<ReturnType<typeof runInFreshWorker>>[] = [];
  try {
    const scriptPath = await bundleWorker('bench/worker/waiting-line-worker.ts', join(dir, 'worker.mjs'));
    for (let round = 1; round <= ROUNDS; round++)
      for (const v of VARIANTS) {
        const run = await runInFreshWorker(scriptPath, dir, v, round);
        runs.push(run);
        console.log(
          `round ${round} ${v}: join ${run.join.cpuUsPerCall} µs (${run.join.wallMs} ms), poll ${run.poll.cpuUsPerCall} µs × ${run.poll.calls}`,
        );
      }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // A round whose line emptied before the counted window (a machine too loaded to keep up) has no polls.
  const of = (v: Variant) => runs.filter((r) => r.variant === v && r.poll.calls > 0);
  const summary = Object.fromEntries(
    VARIANTS.map((v) => [
      v,
      {
        joinCpuUs: median(of(v).map((r) => r.join.cpuUsPerCall)),
        joinsPerSec: median(of(v).map((r) => Math.round((r.join.calls * 1000) / r.join.wallMs))),
        pollCpuUs: median(of(v).map((r) => r.poll.cpuUsPerCall)),
        polls: median(of(v).map((r) => r.poll.calls)),
        gone: of(v).reduce((n, r) => n + r.poll.gone, 0),
      },
    ]),
  ) as Record<Variant, { joinCpuUs: number; joinsPerSec: number; pollCpuUs: number; polls: number; gone: number }>;
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  const result = {
    joins: JOINS,
    pollers: POLLERS,
    idleCpuMsPerSec: median(runs.map((r) => r.idleCpuMsPerSec)),
    pollSeconds: POLL_MS / 1000,
    rounds: ROUNDS,
    ...summary,
    joinRatioSync: ratio(summary.sync.joinCpuUs, summary.memory.joinCpuUs),
    joinRatioBatched: ratio(summary.batched.joinCpuUs, summary.memory.joinCpuUs),
    pollRatio: ratio(summary.sync.pollCpuUs, summary.memory.pollCpuUs),
    pollRatioBatched: ratio(summary.batched.pollCpuUs, summary.memory.pollCpuUs),
    goal: 1.2,
    runs,
  };
  console.log('variant   join µs CPU   joins/s   poll µs CPU   polls');
  for (const v of VARIANTS) {
    const s = summary[v];
    console.log(
      `${v.padEnd(9)} ${String(s.joinCpuUs).padStart(11)} ${String(s.joinsPerSec).padStart(9)} ${String(s.pollCpuUs).padStart(13)} ${String(s.polls).padStart(7)}`,
    );
  }
  console.log(
    `per join: sync ${result.joinRatioSync}×, batched ${result.joinRatioBatched}× the in-memory line; per poll: ${result.pollRatio}× (batched ${result.pollRatioBatched}×); goal ≤ ${result.goal}×`,
  );
  if (summary.sync.gone + summary.batched.gone + summary.memory.gone > 0) {
    console.error('some polls answered gone: the workload dropped buyers (machine too slow to poll on time?)');
  }
  return result;
}

runAsScript(import.meta.url, benchWaitingLine);
