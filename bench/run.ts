/**
 * `npm run bench`: every benchmark, one after another, each in its own process so none warms or
 * loads another. Each prints its own figures and its ratio to its floor — the cheapest program doing
 * the same work, measured in the same run with the same load tool — against the goal
 * (docs/performance.md), beside the ratios to the baselines it measured before.
 *
 *   npm run bench                                  all of them
 *   npm run bench -- reserve edge-doomed           some, by name (`draw` runs only when named)
 *   npm run bench -- --json results.json           also write the figures as JSON (shape below)
 *   npm run bench -- reserve -- --seconds 5        options after `--` go to each chosen benchmark
 *
 * JSON: {"reserve": {ratio, p99Ms, rps, bareRps, floor (2xx/s of node:http + the reserve EVALSHA), okRps (the origin's 2xx/s),
 * ratioToFloor, floorCpuUsPerReq, cpuUsPerReq}, "settle": {ordersPerSec, eventsOnPerSec,
 * eventsCostPct, perMessagePerSec, bareUpdatePerSec, consumerCpuMsPerKOrders,
 * consumerCpuMsPerKOrdersEventsOn, serverCpuMsPerKOrders, serverCpuMsPerKOrdersEventsOn, floor (orders/s
 * of the bare writes with events rows), ratioToFloor (eventsOnPerSec ÷ floor), floorEventsOff,
 * ratioToFloorEventsOff}, "edgeDoomed": {worstRatio, floor (req/s of the fixed-409 Worker), ratioToFloor
 * (the worst scenario's), originCalls, scenarios: [... each with floor, ratioToFloor]}, "cluster": ...,
 * "denyList": {bytesPerId, lookupNs, pushSeconds, runs: [...]},
 * "redisWait": {ratio, rpsWait0, rpsWait1, p99MsWait0, p99MsWait1, non2xxWait1, waitTimeoutMs},
 * "draw" (only when named): {entrants, units, ratio (winners final ÷ bare HMAC pass), winnersFinalMs,
 * publishedMs, drawCpuMs, winnersCpuMs, cpuRatio, drawHeapMb, retainedMb, bareHmacMs, drawHmacPassMs,
 * floor (the bare HMAC pass, ms), ratioToFloor (= ratio)},
 * "waitingLine": {joinRatio, joinRatioBatched, pollRatio, joinCpuUs, joinCpuUsMemory, pollCpuUs, pollCpuUsMemory}};
 * a benchmark not run (or failed) is null, a figure a benchmark does not report is null.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT } from '../support/processes.js';

type Summary = Record<string, unknown> | null;

interface Bench {
  /** Key in the JSON file. */
  key: string;
  module: string;
  export: string;
  /** What the JSON file keeps of the benchmark's own result. */
  summarize(result: any): Summary;
  /** Runs only when named (too long for the default set). */
  optional?: boolean;
  /** Node flags for the benchmark's process (e.g. `--expose-gc` for exact heap figures). */
  nodeFlags?: string[];
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * A summary of named figures, each read from the result at a dotted path; with several paths, the
 * first that holds a value (older benchmark versions named some figures differently).
 */
function figures(paths: Record<string, string | string[]>): (result: any) => Summary {
  const at = (result: any, path: string) => path.split('.').reduce((v, key) => v?.[key], result);
  return (result) =>
    Object.fromEntries(
      Object.entries(paths).map(([name, p]) => [
        name,
        num((Array.isArray(p) ? p : [p]).map((path) => at(result, path)).find((v) => v !== undefined && v !== null)),
      ]),
    );
}

const BENCHES: Record<string, Bench> = {
  reserve: {
    key: 'reserve',
    module: 'bench/reserve.ts',
    export: 'benchReserve',
    summarize: figures({
      ratio: 'ratio',
      p99Ms: 'reserve.p99',
      rps: 'reserve.rps',
      bareRps: 'base.rps',
      floor: 'floor.okRps',
      okRps: 'reserve.okRps',
      ratioToFloor: 'ratioToFloor',
      floorCpuUsPerReq: 'floor.cpuUsPerReq',
      cpuUsPerReq: 'reserve.cpuUsPerReq',
    }),
  },
  settle: {
    key: 'settle',
    module: 'bench/settle.ts',
    export: 'benchSettle',
    // bench/settle.ts owns these names; older versions return perSecond and baseline.perSecond only.
    summarize: figures({
      ordersPerSec: ['ordersPerSec', 'perSecond'],
      // Order events on (ORDER_EVENTS_URL set, the worker delivering alongside), and what that costs.
      eventsOnPerSec: ['eventsOnPerSec', 'ordersPerSecWithEvents'],
      eventsCostPct: 'eventsCostPct',
      perMessagePerSec: ['perMessagePerSec', 'perMessage.perSecond'],
      bareUpdatePerSec: ['bareUpdatePerSec', 'baseline.perSecond'],
      consumerCpuMsPerKOrders: 'consumerCpuMsPerKOrders',
      consumerCpuMsPerKOrdersEventsOn: ['consumerCpuMsPerKOrdersEventsOn', 'consumerCpuMsPerKOrdersWithEvents'],
      serverCpuMsPerKOrders: 'serverCpuMsPerKOrders',
      serverCpuMsPerKOrdersEventsOn: 'serverCpuMsPerKOrdersEventsOn',
      // The floor: the same rows written bare (bench/lib/settle-floor.ts), with events rows and without.
      floor: 'floor',
      ratioToFloor: 'ratioToFloor',
      floorEventsOff: 'floorEventsOff',
      ratioToFloorEventsOff: 'ratioToFloorEventsOff',
    }),
  },
  'edge-doomed': {
    key: 'edgeDoomed',
    module: 'bench/edge-doomed.ts',
    export: 'benchEdgeDoomed',
    summarize: (r) => r,
  },
  // Hook for the Redis Cluster benchmark: runs when bench/cluster.ts exists and exports benchCluster().
  cluster: {
    key: 'cluster',
    module: 'bench/cluster.ts',
    export: 'benchCluster',
    summarize: (r) => r,
  },
  'deny-list': {
    key: 'denyList',
    module: 'bench/deny-list.ts',
    export: 'benchDenyList',
    nodeFlags: ['--expose-gc'],
    summarize: (r) => r,
  },
  // Not in the default set (200k entrants filled, the real draw, then the bare HMAC baseline).
  draw: {
    key: 'draw',
    module: 'bench/draw.ts',
    export: 'benchDraw',
    optional: true,
    nodeFlags: ['--expose-gc'],
    summarize: figures(
      Object.fromEntries(
        [
          'entrants',
          'units',
          'ratio',
          'winnersFinalMs',
          'publishedMs',
          'drawCpuMs',
          'winnersCpuMs',
          'cpuRatio',
          'drawHeapMb',
          'retainedMb',
          'bareHmacMs',
          'drawHmacPassMs',
          'floor',
          'ratioToFloor',
        ].map((name) => [name, name]),
      ),
    ),
  },
  // The persisted waiting line against the in-memory one (goal: ≤ 1.2× per join and per poll).
  'waiting-line': {
    key: 'waitingLine',
    module: 'bench/waiting-line.ts',
    export: 'benchWaitingLine',
    summarize: figures({
      joinRatio: 'joinRatioSync',
      joinRatioBatched: 'joinRatioBatched',
      pollRatio: 'pollRatio',
      joinCpuUs: 'sync.joinCpuUs',
      joinCpuUsMemory: 'memory.joinCpuUs',
      pollCpuUs: 'sync.pollCpuUs',
      pollCpuUsMemory: 'memory.pollCpuUs',
    }),
  },
  'redis-wait': {
    key: 'redisWait',
    module: 'bench/redis-wait.ts',
    export: 'benchRedisWait',
    summarize: figures({
      ratio: 'ratio',
      rpsWait0: 'wait0.rps',
      rpsWait1: 'wait1.rps',
      p99MsWait0: 'wait0.p99',
      p99MsWait1: 'wait1.p99',
      non2xxWait1: 'wait1.non2xx',
      waitTimeoutMs: 'waitTimeoutMs',
    }),
  },
};

function parseCommandLine(argv: string[]) {
  const dash = argv.indexOf('--');
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const forwarded = dash === -1 ? [] : argv.slice(dash + 1);
  const names: string[] = [];
  let jsonFile: string | null = null;
  for (let i = 0; i < own.length; i++) {
    const a = own[i]!;
    if (a === '--json') jsonFile = own[++i] ?? null;
    else if (a.startsWith('--json=')) jsonFile = a.slice('--json='.length);
    else if (a in BENCHES) names.push(a);
    else {
      console.error(`unknown benchmark or option "${a}" (benchmarks: ${Object.keys(BENCHES).join(', ')}; --json FILE)`);
      process.exit(2);
    }
  }
  if (own.includes('--json') && !jsonFile) {
    console.error('--json needs a file name');
    process.exit(2);
  }
  return { names, jsonFile, forwarded };
}

const { names, jsonFile, forwarded } = parseCommandLine(process.argv.slice(2));
const available = Object.keys(BENCHES).filter((n) => existsSync(join(ROOT, BENCHES[n]!.module)));
for (const n of names)
  if (!available.includes(n)) {
    console.error(`${BENCHES[n]!.module} does not exist (yet)`);
    process.exit(2);
  }
const chosen = names.length ? names : available.filter((n) => !BENCHES[n]!.optional);

const dir = mkdtempSync(join(tmpdir(), 'bench-'));
const results: Record<string, Summary> = { reserve: null, settle: null, edgeDoomed: null };
let failed = 0;
for (const name of chosen) {
  const bench = BENCHES[name]!;
  const resultFile = join(dir, `${name}.json`);
  console.log(`\n=== ${bench.module} ===`);
  const args = [...(bench.nodeFlags ?? []), '--import', 'tsx', 'bench/lib/bench-child.ts', ...forwarded];
  const run = spawnSync(process.execPath, args, {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, BENCH_MODULE: bench.module, BENCH_EXPORT: bench.export, BENCH_RESULT_FILE: resultFile },
  });
  // A benchmark may fail its own check (e.g. origin calls during doomed load) and still report figures.
  if (run.status !== 0) failed++;
  results[bench.key] = existsSync(resultFile) ? bench.summarize(JSON.parse(readFileSync(resultFile, 'utf8'))) : null;
}
rmSync(dir, { recursive: true, force: true });
if (jsonFile) {
  writeFileSync(resolve(jsonFile), JSON.stringify(results, null, 2) + '\n');
  console.log(`\nfigures written to ${resolve(jsonFile)}`);
}
if (results.settle && results.settle.perMessagePerSec === null && chosen.includes('settle'))
  console.log('note: bench/settle.ts does not report the per-message baseline (perMessagePerSec is null)');
process.exit(failed ? 1 : 0);
