/**
 * Reserve throughput of one real origin process (\`ORIGIN_ROLE=http\`): a sale of 10M units, then
 * \`POST /internal/reserve\` with autocannon, signed as the edge signs, a new user each. \`env\` says
 * which Redis (and how: REDIS_WAIT_REPLICAS, …). Only granted reservations (2xx) count.
 * `alternatingRounds` compares settings: each in turn, round after round, the best run of each kept.
 */
import autocannon from 'autocannon';
import { randomInt } from 'node:crypto';
import { freePort, stopChild, waitForHttp } from '../../support/processes.js';
import { BENCH_SECRETS, createOpenSale, edgeHeadersSync, spawnOrigin } from './stack.js';

/** An autocannon request that POSTs a new `makeBody()` to `path` each time, signed as the edge signs it. */
export function signedPost(
  path: string,
  makeBody: () => string,
  extraHeaders: () => Record<string, string> = () => ({}),
): autocannon.Request {
  return {
    method: 'POST',
    path,
    setupRequest: (req: any) => {
      const body = makeBody();
      return {
        ...req,
        body,
        headers: {
          'content-type': 'application/json',
          ...extraHeaders(),
          ...edgeHeadersSync(BENCH_SECRETS.EDGE_ORIGIN_SECRET, 'POST', path, body),
        },
      };
    },
  };
}

export async function originReserveRate(opts: {
  env: Record<string, string>;
  mysqlUrl: string;
  stockBuckets: number;
  connections: number;
  duration: number;
}) {
  const { env, mysqlUrl, stockBuckets, connections, duration } = opts;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const origin = spawnOrigin({
    ...BENCH_SECRETS,
    ...env,
    PORT: String(port),
    MYSQL_URL: mysqlUrl,
    ORIGIN_ROLE: 'http',
    LOG_LEVEL: 'warn',
  });
  try {
    await waitForHttp(`${url}/healthz`, 60_000);
    // A bench layout may be one failover from stalling (one replica, REDIS_WAIT_REPLICAS=1): it
    // measures the cost of WAIT, not a sale's safety, so it opens anyway.
    const activityId = await createOpenSale(url, {
      title: 'bench',
      stock: 10_000_000,
      stockBuckets,
      acceptReplicaRisk: true,
    });
    let user = randomInt(1, 2 ** 40);
    const result = await autocannon({
      url,
      connections,
      duration,
      requests: [
        signedPost('/internal/reserve', () =>
          JSON.stringify({ activityId, userId: String(++user), quantity: 1, requestId: `b${user}` }),
        ),
      ],
    });
    // Only granted reservations count: a 503 (command timeout, load shed) is not a decision.
    return {
      rps: Math.round(result['2xx'] / duration),
      p50: result.latency.p50,
      p99: result.latency.p99,
      non2xx: result.non2xx,
    };
  } finally {
    await stopChild(origin);
  }
}

export type ReserveFigures = Awaited<ReturnType<typeof originReserveRate>>;

/**
 * Each arm's reserve rate in turn, `rounds` times (the machine is shared, so a single pair can be
 * skewed by a neighbour); prints every run under `title`, labelled by `label`, and returns the runs
 * and the best (most req/s) run of each arm.
 */
export async function alternatingRounds<K extends string>(
  rounds: number,
  arms: Record<K, () => Promise<ReserveFigures>>,
  title: string,
  label: Record<K, string>,
): Promise<{ runs: Record<K, ReserveFigures>[]; best: Record<K, ReserveFigures> }> {
  const names = Object.keys(arms) as K[];
  const runs: Record<K, ReserveFigures>[] = [];
  for (let round = 0; round < rounds; round++) {
    const run = {} as Record<K, ReserveFigures>;
    for (const name of names) run[name] = await arms[name]();
    runs.push(run);
  }
  console.log(`\n${title}`);
  console.table(
    Object.fromEntries(runs.flatMap((run, i) => names.map((name) => [`round ${i + 1}: ${label[name]}`, run[name]]))),
  );
  const best = {} as Record<K, ReserveFigures>;
  for (const name of names) best[name] = runs.map((run) => run[name]).reduce((a, b) => (b.rps > a.rps ? b : a));
  return { runs, best };
}
