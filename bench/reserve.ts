/**
 * Reserve benchmark: the origin's `POST /internal/reserve` (signed, every request a new user, so
 * every one runs the Lua script and XADDs) against a bare node:http server returning a constant,
 * same load tool (autocannon), same connections, same run. Prints both rates, the ratio and p99.
 *
 * Also the CPU time each server process spent per request (from /proc): on a shared machine the
 * load of others moves req/s far more than it moves CPU per request. With `--rounds R` the bare
 * server and the origin take turns R times and the medians are reported.
 *
 *   npx tsx bench/reserve.ts [--connections 50] [--seconds 10] [--rounds 1]
 */
import autocannon from 'autocannon';
import os from 'node:os';
import { randomBytes, randomInt } from 'node:crypto';
import { freePort, stopChild, waitForHttp } from '../support/processes.js';
import { benchOptions, runAsScript } from './lib/cli.js';
import { signedPost } from './lib/origin-reserve.js';
import { cpuMsOf } from './lib/proc.js';
import { adminCall, BENCH_SECRETS, benchDatabase, createOpenSale, spawnBenchTs, spawnOrigin } from './lib/stack.js';

const {
  connections,
  seconds: duration,
  rounds,
} = benchOptions({ numbers: { connections: 50, seconds: 10, rounds: 1 } });

interface Figures {
  rps: number;
  /** CPU time of the server process per request, µs (NaN where /proc is missing). */
  cpuUsPerReq: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function load(url: string, path: string, makeBody: () => string, pid: number | undefined): Promise<Figures> {
  const cpuBefore = cpuMsOf(pid);
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
    cpuUsPerReq: Math.round(((cpuMsOf(pid) - cpuBefore) * 1000) / result.requests.total),
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
  try {
    await Promise.all([waitForHttp(`${originUrl}/healthz`), waitForHttp(`http://127.0.0.1:${basePort}/`)]);
    const activityId = await createOpenSale(originUrl, { title: 'bench', stock: 10_000_000 });
    activities.push([activityId, activityId]);
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
    const reserves: Figures[] = [];
    for (let r = 0; r < rounds; r++) {
      bases.push(await load(`http://127.0.0.1:${basePort}`, '/internal/reserve', body, baseline.pid));
      reserves.push(await load(originUrl, '/internal/reserve', body, origin.pid));
    }
    const median = (runs: Figures[]) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
    const base = median(bases);
    const reserve = median(reserves);
    const ratio = reserve.rps / base.rps;
    if (rounds > 1)
      console.log(
        `req/s per round — bare: ${bases.map((f) => Math.round(f.rps)).join(', ')}; origin: ${reserves.map((f) => Math.round(f.rps)).join(', ')}`,
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
      'origin /internal/reserve (Lua + XADD)': reserve,
    });
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
    return { base, reserve, ratio, cpuRatio: base.cpuUsPerReq / reserve.cpuUsPerReq };
  } finally {
    await Promise.all([stopChild(origin), stopChild(baseline)]);
    await database.drop(activities);
  }
}

runAsScript(import.meta.url, benchReserve);
