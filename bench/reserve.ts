/**
 * Reserve benchmark: the origin's `POST /internal/reserve` (signed, every request a new user, so
 * every one runs the Lua script and XADDs) against, same load tool (autocannon), same connections,
 * same run:
 *   - its floor (bench/lib/reserve-floor-http.ts): a bare node:http server running the same EVALSHA
 *     of lua/reserve-6.lua on the same sale for the body's user and answering a constant — the
 *     cheapest program doing the same work; the goal is the origin at ≥ 0.8 of it (`ratioToFloor`);
 *   - a bare node:http server returning a constant (`ratio`: the ceiling of any Node server).
 * Prints the rates, the ratios and p99.
 *
 * Also the CPU time each server process, and Redis, spent per request (from /proc): on a shared
 * machine the load of others moves req/s far more than it moves CPU per request. With `--rounds R`
 * the three servers take turns R times and the medians are reported (`ratioToFloor`: the median of
 * the rounds' ratios).
 *
 *   npx tsx bench/reserve.ts [--connections 50] [--seconds 10] [--rounds 1]
 */
import autocannon from 'autocannon';
import os from 'node:os';
import { randomBytes, randomInt } from 'node:crypto';
import { freePort, stopChild, waitForHttp } from '../support/processes.js';
import { benchOptions, runAsScript } from './lib/cli.js';
import { signedPost } from './lib/origin-reserve.js';
import { cpuMsOf, redisServerPid } from './lib/proc.js';
import { adminCall, BENCH_SECRETS, benchDatabase, createOpenSale, spawnBenchTs, spawnOrigin } from './lib/stack.js';

const {
  connections,
  seconds: duration,
  rounds,
} = benchOptions({ numbers: { connections: 50, seconds: 10, rounds: 1 } });

/** The goal: the origin at this share of its floor's req/s, or more. */
const FLOOR_GOAL = 0.8;

interface Figures {
  rps: number;
  /** Answers 2xx per second: granted reservations (a shed request's 503 is not a decision). */
  okRps: number;
  /** CPU time of the server process per request, µs (NaN where /proc is missing). */
  cpuUsPerReq: number;
  /** CPU time of the Redis server per request, µs (NaN unless one redis-server here, or BENCH_REDIS_PID). */
  redisCpuUsPerReq: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function load(url: string, path: string, makeBody: () => string, pid: number | undefined): Promise<Figures> {
  const cpuBefore = cpuMsOf(pid);
  const redisPid = redisServerPid();
  const redisBefore = cpuMsOf(redisPid);
  const result = await autocannon({
    url,
    connections,
    duration,
    // As the edge calls (edge/origin.ts): a W3C traceparent beside the §9 signature.
    requests: [
      signedPost(path, makeBody, () => ({
        traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`,
      })),
    ],
  });
  return {
    rps: result.requests.average,
    okRps: result['2xx'] / duration,
    cpuUsPerReq: Math.round(((cpuMsOf(pid) - cpuBefore) * 1000) / result.requests.total),
    redisCpuUsPerReq: Math.round(((cpuMsOf(redisPid) - redisBefore) * 1000) / result.requests.total),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** Upper bound of the bucket holding quantile q of a Prometheus histogram (text format). */
function histogramQuantile(text: string, name: string, label: string, q: number): number {
  const buckets = [...text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)",${label}\\} (\\d+)`, 'gm'))].map(
    (m) => ({
      le: m[1] === '+Inf' ? Infinity : Number(m[1]),
      count: Number(m[2]),
    }),
  );
  const total = buckets.at(-1)?.count ?? 0;
  return buckets.find((b) => b.count >= q * total)?.le ?? NaN;
}

export async function benchReserve() {
  const database = await benchDatabase();
  const mysqlUrl = database.url;
  const activities: [string, string][] = [];
  const port = await freePort();
  const originUrl = `http://127.0.0.1:${port}`;
  const origin = spawnOrigin({
    ...BENCH_SECRETS,
    PORT: String(port),
    MYSQL_URL: mysqlUrl,
    ORIGIN_ROLE: 'http',
    // BENCH_ORIGIN_LOG_LEVEL=info measures the origin at its production default (one line per reserve).
    LOG_LEVEL: process.env.BENCH_ORIGIN_LOG_LEVEL ?? 'warn',
  });
  const basePort = await freePort();
  const baseline = spawnBenchTs('bench/lib/baseline-http.ts', { PORT: String(basePort) });
  let floor: ReturnType<typeof spawnBenchTs> | null = null;
  try {
    await Promise.all([waitForHttp(`${originUrl}/healthz`), waitForHttp(`http://127.0.0.1:${basePort}/`)]);
    const activityId = await createOpenSale(originUrl, { title: 'bench', stock: 10_000_000 });
    activities.push([activityId, activityId]);
    // The floor decides on the same sale (its SKU is the activity's id), each request a new user.
    const floorPort = await freePort();
    floor = spawnBenchTs('bench/lib/reserve-floor-http.ts', {
      PORT: String(floorPort),
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      ACTIVITY_ID: activityId,
      SKU_ID: activityId,
    });
    await waitForHttp(`http://127.0.0.1:${floorPort}/`);
    let user = randomInt(1, 2 ** 40);
    // The body the edge sends (edge/routes/purchase.ts), its trace id included.
    const body = () =>
      JSON.stringify({
        activityId,
        userId: String(++user),
        quantity: 1,
        requestId: `b${user}`,
        traceId: randomBytes(16).toString('hex'),
      });

    const bases: Figures[] = [];
    const floors: Figures[] = [];
    const reserves: Figures[] = [];
    for (let r = 0; r < rounds; r++) {
      bases.push(await load(`http://127.0.0.1:${basePort}`, '/internal/reserve', body, baseline.pid));
      floors.push(await load(`http://127.0.0.1:${floorPort}`, '/internal/reserve', body, floor.pid));
      reserves.push(await load(originUrl, '/internal/reserve', body, origin.pid));
    }
    const median = (runs: Figures[]) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
    const base = median(bases);
    const floorRun = median(floors);
    const reserve = median(reserves);
    const ratio = reserve.rps / base.rps;
    // Each round's origin run against the same round's floor run, then the median of those ratios;
    // granted reservations only (2xx), so requests the origin sheds under load do not count as work.
    const floorRatios = reserves.map((f, i) => f.okRps / floors[i]!.okRps);
    const ratioToFloor = [...floorRatios].sort((a, b) => a - b)[Math.floor(rounds / 2)]!;
    if (rounds > 1)
      console.log(
        `req/s per round — bare: ${bases.map((f) => Math.round(f.rps)).join(', ')}; floor: ${floors.map((f) => Math.round(f.rps)).join(', ')}; origin: ${reserves.map((f) => Math.round(f.rps)).join(', ')}`,
      );
    const serverP99 = histogramQuantile(
      await (await fetch(`${originUrl}/metrics`)).text(),
      'seckill_reserve_duration_seconds',
      'code="ok"',
      0.99,
    );
    console.log(
      `\nreserve benchmark (${connections} connections, ${duration} s each${rounds > 1 ? `, median of ${rounds} rounds` : ''}, autocannon)`,
    );
    console.table({
      'bare node:http (constant)': base,
      'floor: node:http + EVALSHA reserve-6': floorRun,
      'origin /internal/reserve (Lua + XADD)': reserve,
    });
    if (floors.some((f) => f.non2xx > 0 || f.errors > 0))
      throw new Error(
        `the floor answered ${floors.map((f) => f.non2xx).join(', ')} non-2xx: its EVALSHA failed or refused`,
      );
    console.log(
      `ratio origin/floor = ${ratioToFloor.toFixed(2)} (goal ≥ ${FLOOR_GOAL}) — ${ratioToFloor >= FLOOR_GOAL ? 'met' : 'NOT met'}` +
        `${rounds > 1 ? ` (median; rounds ${floorRatios.map((x) => x.toFixed(2)).join(', ')})` : ''}; ` +
        `CPU per request: origin ${reserve.cpuUsPerReq} µs, floor ${floorRun.cpuUsPerReq} µs; Redis ${reserve.redisCpuUsPerReq} µs with the origin, ${floorRun.redisCpuUsPerReq} µs with the floor`,
    );
    console.log(
      `ratio origin/bare = ${ratio.toFixed(2)} (goal >= 0.5); origin p99 = ${reserve.p99} ms at the client (goal <= 5 ms)`,
    );
    console.log(
      `server CPU per request: origin ${reserve.cpuUsPerReq} µs, bare ${base.cpuUsPerReq} µs (ratio ${(base.cpuUsPerReq / reserve.cpuUsPerReq).toFixed(2)})`,
    );
    console.log(
      `origin-side p99 of the reserve handler (from its own histogram, excludes client queueing) <= ${serverP99 * 1000} ms` +
        ` — with load generator, origin, Redis and MariaDB sharing ${os.cpus().length} cores, client p99 is mostly queueing (Little: ${connections} conns / ${Math.round(reserve.rps)} req/s = ${((connections / reserve.rps) * 1000).toFixed(1)} ms mean)`,
    );
    await adminCall(originUrl, 'PATCH', `/admin/activities/${activityId}`, { state: 'stopped' });
    return {
      base,
      floor: floorRun,
      reserve,
      ratio,
      ratioToFloor,
      ratiosToFloor: floorRatios,
      cpuRatio: base.cpuUsPerReq / reserve.cpuUsPerReq,
    };
  } finally {
    await Promise.all([stopChild(origin), stopChild(baseline), ...(floor ? [stopChild(floor)] : [])]);
    await database.drop(activities);
  }
}

runAsScript(import.meta.url, benchReserve);
