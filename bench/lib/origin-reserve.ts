/**
 * Reserve throughput of one real origin process (\`ORIGIN_ROLE=http\`): a sale of 10M units, then
 * \`POST /internal/reserve\` with autocannon, signed as the edge signs, a new user each. \`env\` says
 * which Redis (and how: REDIS_WAIT_REPLICAS, …). Only granted reservations (2xx) count.
 */
import autocannon from 'autocannon';
import { randomInt } from 'node:crypto';
import { adminCall, BENCH_SECRETS, edgeHeadersSync, freePort, spawnOrigin, stopChild, waitForHttp } from './stack.js';

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
    const activityId = String(randomInt(1, 2 ** 40));
    const now = Date.now();
    await adminCall(url, 'POST', '/admin/activities', {
      activityId,
      skuId: activityId,
      title: 'bench',
      stock: 10_000_000,
      stockBuckets,
      startsAt: new Date(now - 1000).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
    });
    // A bench layout may be one failover from stalling (one replica, REDIS_WAIT_REPLICAS=1): it
    // measures the cost of WAIT, not a sale's safety, so it opens anyway.
    await adminCall(url, 'POST', `/admin/activities/${activityId}/warmup?acceptReplicaRisk=true`);
    let user = randomInt(1, 2 ** 40);
    const path = '/internal/reserve';
    const result = await autocannon({
      url,
      connections,
      duration,
      requests: [
        {
          method: 'POST',
          path,
          setupRequest: (req: any) => {
            const body = JSON.stringify({ activityId, userId: String(++user), quantity: 1, requestId: `b${user}` });
            return {
              ...req,
              body,
              headers: {
                'content-type': 'application/json',
                ...edgeHeadersSync(BENCH_SECRETS.EDGE_ORIGIN_SECRET, 'POST', path, body),
              },
            };
          },
        },
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
