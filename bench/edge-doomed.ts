/**
 * Edge benchmark: doomed requests — sold-out flag set, user rate-limited, forged ticket — through
 * the real edge Worker (Miniflare, workerd's own socket) against a hello-world Worker on the same
 * runtime, same load tool (autocannon), same connections, same run. Prints rates, the ratio to hello
 * (goal ≥ 0.6) and how many origin calls the doomed load caused (goal 0). Figures, not assertions.
 *
 *   npx tsx bench/edge-doomed.ts [--connections 50] [--seconds 8] [--users 500]
 */
import autocannon from 'autocannon';
import { sign } from 'hono/jwt';
import { Miniflare } from 'miniflare';
import { parseArgs } from 'node:util';
import { signEdgeRequest, type ActivitySnapshot } from '../contract/index.js';
import { startEdge } from '../test/helpers/edge.js';
import { TEST_EDGE_SECRETS } from '../test/helpers/edge-test-secrets.js';
import { startStandInOrigin } from '../test/helpers/stand-in-origin.js';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '8' },
    users: { type: 'string', default: '500' },
  },
});
const connections = Number(values.connections);
const duration = Number(values.seconds);
const userCount = Number(values.users);

interface Prepared {
  path: string;
  headers: Record<string, string>;
}

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  expected: number;
  unexpected: number;
  originCalls: number;
}

function snapshot(
  activityId: string,
  over: Partial<ActivitySnapshot['config']> = {},
  soldOut = false,
): ActivitySnapshot {
  return {
    config: {
      activityId,
      skuId: '1',
      title: `bench ${activityId}`,
      startsAt: new Date(Date.now() - 60_000).toISOString(),
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      maxPerUser: 1,
      paymentTimeoutSeconds: 900,
      userRatePerSec: 1,
      admissionRatePerSec: 100_000,
      admissionShards: 4,
      version: 1,
      ...over,
    },
    state: 'open',
    soldOut,
  };
}

async function main(): Promise<void> {
  const origin = await startStandInOrigin({ secret: TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET });
  const edge = await startEdge({ originUrl: origin.url, vars: { TICKET_TTL_SECONDS: '3600' } });
  const hello = new Miniflare({
    modules: true,
    script: 'export default { fetch() { return new Response("hello"); } };',
    compatibilityDate: '2026-04-01',
    host: '127.0.0.1',
    port: 0,
    cf: false,
  });
  const helloUrl = (await hello.ready).toString().replace(/\/$/, '');

  const push = async (s: ActivitySnapshot) => {
    const path = `/internal/activities/${s.config.activityId}`;
    const body = JSON.stringify(s);
    const headers = await signEdgeRequest(TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, {
      method: 'PUT',
      pathWithQuery: path,
      body,
    });
    const res = await fetch(`${edge.url}${path}`, { method: 'PUT', headers, body });
    if (res.status !== 200) throw new Error(`push ${res.status}`);
  };
  const bearer = (userId: string) =>
    sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 3600 }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256').then(
      (t) => `Bearer ${t}`,
    );
  const ticketFor = async (activityId: string, authorization: string): Promise<string> => {
    const res = await fetch(`${edge.url}/api/activities/${activityId}/tickets`, {
      method: 'POST',
      headers: { authorization },
    });
    if (res.status !== 200) throw new Error(`ticket ${res.status}`);
    return ((await res.json()) as { purchaseUrl: string }).purchaseUrl;
  };
  const users = Array.from({ length: userCount }, (_, i) => String(10_000_000 + i));
  const purchaseHeaders = (authorization: string, i: number) => ({
    authorization,
    'idempotency-key': `bench-${i}`,
    'content-type': 'application/json',
  });

  // Sold out: tickets issued while open, then the origin pushes soldOut=true.
  const soldOutId = '700001';
  await push(snapshot(soldOutId));
  const soldOut: Prepared[] = [];
  for (const [i, u] of users.entries()) {
    const authorization = await bearer(u);
    soldOut.push({ path: await ticketFor(soldOutId, authorization), headers: purchaseHeaders(authorization, i) });
  }
  await push(snapshot(soldOutId, {}, true));

  // Forged ticket: a genuine one with its signature replaced.
  const forgedId = '700003';
  await push(snapshot(forgedId));
  const forged: Prepared[] = [];
  for (const [i, u] of users.entries()) {
    const authorization = await bearer(u);
    const path = (await ticketFor(forgedId, authorization)).slice(0, -64) + 'f'.repeat(64);
    forged.push({ path, headers: purchaseHeaders(authorization, i) });
  }

  // Rate-limited: each user bought once (before the load); at 0.01/s no token comes back during the run.
  const limitedId = '700002';
  await push(snapshot(limitedId, { userRatePerSec: 0.01 }));
  const limited: Prepared[] = [];
  // Prepared right before its run: an idle UserGateDO shard may be evicted and forget (by design).
  const prepareLimited = async () => {
    for (const [i, u] of users.entries()) {
      const authorization = await bearer(u);
      const p = { path: await ticketFor(limitedId, authorization), headers: purchaseHeaders(authorization, i) };
      const first = await fetch(`${edge.url}${p.path}`, { method: 'POST', headers: p.headers, body: '{"quantity":1}' });
      if (first.status !== 202) throw new Error(`first purchase ${first.status}`);
      limited.push(p);
    }
  };

  async function run(
    name: string,
    url: string,
    expectedStatus: number,
    prepared: Prepared[] | null,
    activityId?: string,
  ) {
    let next = 0;
    const before = activityId ? origin.calls(activityId).total : 0;
    const opts: autocannon.Options = {
      url,
      connections,
      duration,
      requests: [
        prepared
          ? {
              method: 'POST',
              body: '{"quantity":1}',
              setupRequest: (req: autocannon.Request) => {
                const p = prepared[next++ % prepared.length]!;
                return { ...req, path: p.path, headers: p.headers };
              },
            }
          : { method: 'GET', path: '/' },
      ],
    };
    let expected = 0;
    let unexpected = 0;
    // Without a callback autocannon returns an instance that is also a promise of the result.
    const instance = autocannon(opts) as unknown as autocannon.Instance & Promise<autocannon.Result>;
    instance.on('response', (_client: unknown, statusCode: number) => {
      if (statusCode === expectedStatus) expected++;
      else unexpected++;
    });
    const result = await instance;
    return {
      name,
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      expected,
      unexpected,
      originCalls: activityId ? origin.calls(activityId).total - before : 0,
    } satisfies Figures;
  }

  console.log(`edge-doomed: ${connections} connections, ${duration} s per run, ${userCount} users per scenario`);
  const results: Figures[] = [];
  results.push(await run('hello Worker', helloUrl, 200, null));
  results.push(await run('sold out (409)', edge.url, 409, soldOut, soldOutId));
  await prepareLimited();
  results.push(await run('rate-limited (429)', edge.url, 429, limited, limitedId));
  results.push(await run('bad ticket (403)', edge.url, 403, forged, forgedId));

  const helloRps = results[0]!.rps;
  console.log('');
  console.log('scenario             req/s    ratio  p50 ms  p99 ms  expected  unexpected  origin calls');
  for (const r of results) {
    console.log(
      `${r.name.padEnd(19)} ${r.rps.toFixed(0).padStart(7)}  ${(r.rps / helloRps).toFixed(2).padStart(5)}  ${String(r.p50).padStart(6)}  ${String(r.p99).padStart(6)}  ${String(r.expected).padStart(8)}  ${String(r.unexpected).padStart(10)}  ${String(r.originCalls).padStart(12)}`,
    );
  }
  const doomed = results.slice(1);
  const worst = Math.min(...doomed.map((r) => r.rps / helloRps));
  const calls = doomed.reduce((n, r) => n + r.originCalls, 0);
  console.log('');
  console.log(`worst doomed/hello ratio: ${worst.toFixed(2)} (goal ≥ 0.6) — ${worst >= 0.6 ? 'met' : 'NOT met'}`);
  console.log(`origin calls during doomed load: ${calls} (goal 0) — ${calls === 0 ? 'met' : 'NOT met'}`);

  await hello.dispose();
  await edge.stop();
  await origin.stop();
}

await main();
