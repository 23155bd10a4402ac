/**
 * Edge benchmark: what each refusal step of a doomed purchase costs, through the real edge Worker
 * (Miniflare, workerd's own socket), against its floor — a Worker that takes the scenario's very
 * requests, reads the body and answers a fixed 409 — and a hello-world Worker, on the same runtime,
 * same load tool (autocannon), same connections, same run. One scenario per step:
 *
 *   state, no credentials   sold-out activity, no JWT, no ticket: 409 where the cached public state
 *                           answers before the JWT (docs/design.md §10), 401 where the JWT is checked first
 *   state, genuine ticket   sold-out activity with a valid JWT and ticket (409 either way)
 *   JWT                     a token signed with another secret (401)
 *   ticket                  a valid JWT, a forged ticket (403)
 *   rate limit              a user who already bought, at 0.01/s (429)
 *
 * Hello and the floor run again right before each scenario, and the scenario is measured against
 * those runs (this shared machine's speed drifts within minutes by more than the steps cost). With
 * `--rounds R` every scenario is measured R times, the order rotated each round (so no scenario
 * always runs last, on a workerd that has served the most requests), and its row is the run with
 * the median ratio to hello; its ratio to the floor is the median of its rounds' ratios to the floor
 * (goal ≥ 0.9 in every scenario: `worstRatioToFloor`), and every round's ratios are printed.
 * Prints req/s, the ratio to hello (goal ≥ 0.75), the extra time per request over hello
 * (1/rps − 1/hello rps: the step's cost at saturation), which step answered (by status), and how many
 * origin calls the doomed load caused — any is a failure (exit code 1): a doomed click must never
 * reach the origin. Speed figures are figures, not assertions.
 *
 *   npx tsx bench/edge-doomed.ts [--connections 50] [--seconds 8] [--rounds 3] [--users 500] [--only <name part>]
 *   npx tsx bench/edge-doomed.ts --do-call     what one user-gate Durable Object call costs a request
 *   npx tsx bench/edge-doomed.ts --no-floor    without the floor Worker (hello only)
 *
 * `--do-call` measures the call a rate-limit refusal makes when the isolate does not remember it:
 * a Worker that answers after one call to a Durable Object shaped like UserGateDO (16 shards, a map
 * of buckets), by RPC (`stub.admit(key, rate, userId)`, as the edge does) and by `stub.fetch()` with a
 * JSON body, against a Worker that answers at once, same runtime, same load.
 *
 * The floor runs right after each scenario's hello: a Worker that takes the scenario's very
 * requests, reads the body and answers a fixed refusal of the same shape (409, the three headers, a
 * JSON body as long): what any Worker pays for a doomed click's POST — its headers, its body,
 * Miniflare's entry worker passing that body on — before the edge's own checks. Its req/s is the
 * most any edge could reach in this benchmark (docs/performance.md).
 */
import autocannon from 'autocannon';
import { Miniflare } from 'miniflare';
import type { ActivitySnapshot } from '../contract/index.js';
import { openSnapshot } from '../support/edge-calls.js';
import { COMPATIBILITY_DATE } from '../support/local-edge.js';
import { bearerFor, startBenchEdge, type BenchEdge } from './lib/bench-edge.js';
import { benchOptions, runAsScript } from './lib/cli.js';
import { workerdCpuMs, workerdRssMb } from './lib/proc.js';

const options = benchOptions({
  numbers: { connections: 50, seconds: 8, rounds: 3, users: 500 },
  // `--floor` is accepted for older command lines: the floor runs unless `--no-floor`.
  flags: ['do-call', 'floor', 'no-floor'],
  texts: ['only'],
});
const connections = options.connections;
const duration = options.seconds;
const rounds = options.rounds;
const userCount = options.users;
/** Runs only the scenarios whose name contains this text (hello always runs). */
const only = options.only;
/** The goal: each scenario at this share of its floor Worker's req/s, or more. */
const FLOOR_GOAL = 0.9;

/** workerd CPU µs per request between two readings of workerdCpuMs(); null off Linux or without requests. */
const cpuUsPerRequest = (beforeMs: number, afterMs: number, requests: number): number | null =>
  Number.isNaN(beforeMs) || Number.isNaN(afterMs) || requests === 0
    ? null
    : Math.round(((afterMs - beforeMs) * 1000) / requests);

interface Prepared {
  path: string;
  headers: Record<string, string>;
}

/** Which check refused, told by the status it answers with. */
const STEP_OF_STATUS: Record<number, string> = { 409: 'state', 401: 'JWT', 403: 'ticket', 429: 'rate limit' };

export interface DoomedScenario {
  name: string;
  rps: number;
  ratio: number;
  /** 1/rps − 1/hello rps, microseconds: what this path costs over a hello Worker at saturation. */
  extraUsPerRequest: number;
  /**
   * The hello Worker's req/s in the run right before this scenario, which `ratio` and
   * `extraUsPerRequest` are taken against (this machine's speed drifts within a benchmark).
   */
  helloRps?: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses by status, e.g. {"409": 41234}. */
  statuses: Record<string, number>;
  /** The step that answered most requests (state, JWT, ticket, rate limit). */
  answeredBy: string;
  expected: number;
  unexpected: number;
  originCalls: number;
  /**
   * CPU time the workerd processes spent per request (µs, user + system, from /proc): what the path
   * costs the runtime itself, which a busy machine moves far less than req/s. Null off Linux.
   */
  workerdCpuUsPerRequest: number | null;
  /** The floor Worker's req/s over the same hello run, and its workerd CPU µs per request. */
  floorRatio?: number;
  floorCpuUsPerRequest?: number | null;
  /** The floor Worker's req/s (in the row's round). */
  floor?: number;
  /** This scenario's req/s over its floor Worker's in the same round; the median of the rounds. */
  ratioToFloor?: number;
  /** With `--rounds`: the ratio to the floor in each round, in round order. */
  ratiosToFloor?: number[];
  /** With `--rounds`: this scenario's ratio in each round, in round order (the row is the median one). */
  ratios?: number[];
  /** RSS of the workerd processes after the run (MB, from /proc): growth across runs is per-request memory. */
  workerdRssMb: number | null;
  /**
   * CPU this benchmark process (the load tool, autocannon) spent per request (µs): on the same two
   * cores as workerd, so a costly client lowers req/s without the edge being any slower.
   */
  loadToolCpuUsPerRequest: number | null;
}

export interface EdgeDoomedResult {
  helloRps: number;
  worstRatio: number;
  /** The floor Worker's req/s, the median of its runs (null with `--no-floor`). */
  floor: number | null;
  /** The worst scenario's ratio to the floor (each scenario's the median of its rounds); null with `--no-floor`. */
  ratioToFloor: number | null;
  originCalls: number;
  scenarios: DoomedScenario[];
}

/** A sale of this benchmark (a stand-in snapshot), sold out or not. */
const snapshot = (activityId: string, over: Partial<ActivitySnapshot['config']> = {}, soldOut = false) =>
  openSnapshot(activityId, { ...over, soldOut });

export async function benchEdgeDoomed(): Promise<EdgeDoomedResult> {
  const stage = await startBenchEdge({ TICKET_TTL_SECONDS: '3600' });
  const hello = new Miniflare({
    modules: true,
    script: 'export default { fetch() { return new Response("hello"); } };',
    compatibilityDate: COMPATIBILITY_DATE,
    host: '127.0.0.1',
    port: 0,
    cf: false,
  });
  const floor = !options['no-floor']
    ? new Miniflare({
        modules: true,
        script: FLOOR_WORKER,
        compatibilityDate: COMPATIBILITY_DATE,
        host: '127.0.0.1',
        port: 0,
        cf: false,
      })
    : null;
  try {
    const helloUrl = (await hello.ready).toString().replace(/\/$/, '');
    const floorUrl = floor ? (await floor.ready).toString().replace(/\/$/, '') : null;
    return await measure(stage, helloUrl, floorUrl);
  } finally {
    await floor?.dispose();
    await hello.dispose();
    await stage.stop();
  }
}

/** The floor: reads the body, answers a fixed refusal shaped like the edge's (status, headers, body length). */
const FLOOR_WORKER = `
const body = JSON.stringify({ error: 'sold_out', message: 'the activity is sold out', traceId: '0'.repeat(32) });
export default {
  async fetch(req) {
    await req.arrayBuffer();
    return new Response(body, {
      status: 409,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-trace-id': '0'.repeat(32) },
    });
  },
};`;

async function measure(stage: BenchEdge, helloUrl: string, floorUrl: string | null): Promise<EdgeDoomedResult> {
  const edgeUrl = stage.edge.url;
  const { origin, push } = stage;
  const ticketFor = async (activityId: string, authorization: string): Promise<string> => {
    const res = await fetch(`${edgeUrl}/api/activities/${activityId}/tickets`, {
      method: 'POST',
      headers: { authorization },
    });
    if (res.status !== 200) throw new Error(`ticket ${res.status}`);
    return ((await res.json()) as { purchaseUrl: string }).purchaseUrl;
  };
  const users = Array.from({ length: userCount }, (_, i) => String(10_000_000 + i));
  const purchaseHeaders = (authorization: string | null, i: number): Record<string, string> => ({
    ...(authorization ? { authorization } : {}),
    'idempotency-key': `bench-${i}`,
    'content-type': 'application/json',
  });

  // Sold out: tickets issued while open, then the origin pushes soldOut=true.
  const soldOutId = '700001';
  await push(snapshot(soldOutId));
  const soldOut: Prepared[] = [];
  for (const [i, u] of users.entries()) {
    const authorization = bearerFor(u);
    soldOut.push({ path: await ticketFor(soldOutId, authorization), headers: purchaseHeaders(authorization, i) });
  }
  await push(snapshot(soldOutId, {}, true));
  // The same sold-out sale, clicked with no token and no ticket: nothing to verify but the state.
  const anonymous: Prepared[] = users.map((_, i) => ({
    path: `/api/activities/${soldOutId}/purchase`,
    headers: purchaseHeaders(null, i),
  }));

  // Forged ticket: a genuine one with its signature replaced. Bad JWT: the genuine ticket, a token
  // signed with another secret (well-formed, so the HMAC is computed and refused).
  const forgedId = '700003';
  await push(snapshot(forgedId));
  const forged: Prepared[] = [];
  const badJwt: Prepared[] = [];
  for (const [i, u] of users.entries()) {
    const authorization = bearerFor(u);
    const genuine = await ticketFor(forgedId, authorization);
    forged.push({ path: genuine.slice(0, -64) + 'f'.repeat(64), headers: purchaseHeaders(authorization, i) });
    const wrong = bearerFor(u, 'not-the-user-token-secret-0123456789');
    badJwt.push({ path: genuine, headers: purchaseHeaders(wrong, i) });
  }

  // Rate-limited: each user bought once (before the load); at 0.01/s no token comes back during the run.
  // Prepared right before its run, on an activity of its own each round: an idle UserGateDO shard may
  // be evicted and forget (by design), and after 100 s a token does come back.
  const limitedIds: string[] = [];
  const prepareLimited = async (): Promise<Prepared[]> => {
    const limitedId = String(700_100 + limitedIds.length);
    limitedIds.push(limitedId);
    await push(snapshot(limitedId, { userRatePerSec: 0.01 }));
    const limited: Prepared[] = [];
    for (const [i, u] of users.entries()) {
      const authorization = bearerFor(u);
      const p = { path: await ticketFor(limitedId, authorization), headers: purchaseHeaders(authorization, i) };
      const first = await fetch(`${edgeUrl}${p.path}`, { method: 'POST', headers: p.headers, body: '{"quantity":1}' });
      if (first.status !== 202) throw new Error(`first purchase ${first.status}`);
      limited.push(p);
    }
    return limited;
  };

  const originCalls = () => [soldOutId, forgedId, ...limitedIds].reduce((n, id) => n + origin.calls(id).total, 0);

  async function run(
    name: string,
    url: string,
    expected: number[],
    prepared: Prepared[] | null,
  ): Promise<DoomedScenario> {
    const before = originCalls();
    // Every request prepared up front, so autocannon builds each one once and only cycles through
    // them (a `setupRequest` rebuilds every request: the load tool, on the same two cores, then
    // costs a doomed POST several times what it costs hello's GET, and throttles it).
    const opts: autocannon.Options = {
      url,
      connections,
      duration,
      requests: prepared
        ? prepared.map((p) => ({ method: 'POST', path: p.path, headers: p.headers, body: '{"quantity":1}' }))
        : [{ method: 'GET', path: '/' }],
    };
    const statuses: Record<string, number> = {};
    const cpuBefore = workerdCpuMs();
    const benchCpuBefore = process.cpuUsage();
    // Without a callback autocannon returns an instance that is also a promise of the result.
    const instance = autocannon(opts) as unknown as autocannon.Instance & Promise<autocannon.Result>;
    // on() returns the instance itself, which is awaited below.
    void instance.on('response', (_client: unknown, statusCode: number) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    });
    const result = await instance;
    const cpuAfter = workerdCpuMs();
    const benchCpu = process.cpuUsage(benchCpuBefore);
    const count = (codes: number[]) => codes.reduce((n, code) => n + (statuses[code] ?? 0), 0);
    const total = Object.values(statuses).reduce((n, v) => n + v, 0);
    const top = Object.entries(statuses).sort((a, b) => b[1] - a[1])[0]?.[0];
    return {
      name,
      rps: result.requests.average,
      ratio: 0,
      extraUsPerRequest: 0,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      statuses,
      answeredBy: prepared ? (STEP_OF_STATUS[Number(top)] ?? `status ${top}`) : 'hello',
      expected: count(expected),
      unexpected: total - count(expected),
      originCalls: prepared ? originCalls() - before : 0,
      workerdCpuUsPerRequest: cpuUsPerRequest(cpuBefore, cpuAfter, total),
      workerdRssMb: Number.isNaN(workerdRssMb()) ? null : Math.round(workerdRssMb()),
      loadToolCpuUsPerRequest: total === 0 ? null : Math.round((benchCpu.user + benchCpu.system) / total),
    } satisfies DoomedScenario;
  }

  console.log(
    `edge-doomed: ${connections} connections, ${duration} s per run, ${userCount} users per scenario; ` +
      'hello runs again right before each scenario, which is measured against that run',
  );
  const hellos: DoomedScenario[] = [];
  const floors: DoomedScenario[] = [];
  const runs = new Map<string, DoomedScenario[]>();
  // Each scenario against the hello run just before it: on this shared machine the same server's
  // req/s drifts by a third within minutes, more than the steps being compared cost.
  const scenario = async (name: string, expected: number[], prepared: Prepared[]) => {
    const hello = await run('hello Worker', helloUrl, [200], null);
    hellos.push(hello);
    const floor = floorUrl ? await run('floor Worker', floorUrl, [409], prepared) : null;
    const r = await run(name, edgeUrl, expected, prepared);
    r.helloRps = hello.rps;
    if (floor) {
      floors.push(floor);
      r.floor = floor.rps;
      r.ratioToFloor = r.rps / floor.rps;
      r.floorRatio = floor.rps / hello.rps;
      r.floorCpuUsPerRequest = floor.workerdCpuUsPerRequest;
    }
    r.ratio = r.rps / hello.rps;
    r.extraUsPerRequest = 1e6 / r.rps - 1e6 / hello.rps;
    runs.set(name, [...(runs.get(name) ?? []), r]);
  };
  const scenarios: { name: string; expected: number[]; prepared: () => Promise<Prepared[]> }[] = [
    { name: 'state, no credentials', expected: [409, 401], prepared: async () => anonymous },
    { name: 'state, genuine ticket', expected: [409], prepared: async () => soldOut },
    { name: 'JWT (bad token)', expected: [401], prepared: async () => badJwt },
    { name: 'ticket (forged)', expected: [403], prepared: async () => forged },
    { name: 'rate limit', expected: [429], prepared: prepareLimited },
  ].filter((sc) => only === undefined || sc.name.includes(only));
  for (let round = 0; round < rounds; round++) {
    // Rotated: the same scenario measured up to 0.1 lower when it ran last than when it ran first
    // (its workerd had served ~150k more requests, RSS up from ~0.6 to ~1.1 GB), so a fixed order
    // would always charge that to the same scenario.
    const shift = round % Math.max(1, scenarios.length);
    for (const sc of [...scenarios.slice(shift), ...scenarios.slice(0, shift)])
      await scenario(sc.name, sc.expected, await sc.prepared());
  }
  if (hellos.length === 0) hellos.push(await run('hello Worker', helloUrl, [200], null));
  // The hello row: the median of its runs. A scenario's row: its run with the median ratio.
  const median = (all: DoomedScenario[]) => [...all].sort((a, b) => a.ratio - b.ratio)[Math.floor(all.length / 2)]!;
  const hello = [...hellos].sort((a, b) => a.rps - b.rps)[Math.floor(hellos.length / 2)]!;
  hello.ratio = 1;
  const doomed = scenarios.map((sc) => {
    const all = runs.get(sc.name)!;
    const row = { ...median(all) };
    if (all.length > 1) row.ratios = all.map((r) => Number(r.ratio.toFixed(3)));
    if (floorUrl) {
      const toFloor = all.map((r) => r.ratioToFloor!);
      row.ratioToFloor = [...toFloor].sort((a, b) => a - b)[Math.floor(toFloor.length / 2)]!;
      if (all.length > 1) row.ratiosToFloor = toFloor.map((x) => Number(x.toFixed(3)));
    }
    // Answers are counted over every round: one unexpected status or origin call in any run shows.
    row.originCalls = all.reduce((n, r) => n + r.originCalls, 0);
    row.expected = all.reduce((n, r) => n + r.expected, 0);
    row.unexpected = all.reduce((n, r) => n + r.unexpected, 0);
    const statuses: Record<string, number> = {};
    for (const r of all) for (const [code, n] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
    row.statuses = statuses;
    return row;
  });
  console.log(`hello Worker req/s per run: ${hellos.map((h) => h.rps.toFixed(0)).join(', ')} (median in the table)`);
  if (rounds > 1) {
    console.log(`${rounds} rounds, order rotated each round; each row is the scenario's run with the median ratio:`);
    for (const r of doomed)
      console.log(
        `  ${r.name.padEnd(22)} ratios to hello by round ${r.ratios!.map((x) => x.toFixed(2)).join(', ')}` +
          (r.ratiosToFloor ? `; to the floor ${r.ratiosToFloor.map((x) => x.toFixed(2)).join(', ')}` : ''),
      );
  }

  console.log('');
  console.log(
    'scenario                 req/s  hello req/s  ratio  +µs/req  workerd CPU µs/req  load tool CPU µs/req  answered by  p50 ms  p99 ms  expected  unexpected  origin calls  workerd RSS MB',
  );
  for (const r of [hello, ...doomed]) {
    const extra = r === hello ? '' : r.extraUsPerRequest.toFixed(0);
    const against = r === hello ? '' : (r.helloRps ?? hello.rps).toFixed(0);
    console.log(
      `${r.name.padEnd(22)} ${r.rps.toFixed(0).padStart(7)}  ${against.padStart(11)}  ${r.ratio.toFixed(2).padStart(5)}  ${extra.padStart(7)}  ${String(r.workerdCpuUsPerRequest ?? '-').padStart(18)}  ${String(r.loadToolCpuUsPerRequest ?? '-').padStart(20)}  ${r.answeredBy.padEnd(11)}  ${String(r.p50Ms).padStart(6)}  ${String(r.p99Ms).padStart(6)}  ${String(r.expected).padStart(8)}  ${String(r.unexpected).padStart(10)}  ${String(r.originCalls).padStart(12)}  ${String(r.workerdRssMb ?? '-').padStart(13)}`,
    );
  }
  if (floorUrl) {
    console.log('');
    console.log(
      `floor: a Worker taking the same POST, reading its body, answering a fixed 409 (run right after each hello); ` +
        `edge/floor is the median of the rounds (goal ≥ ${FLOOR_GOAL} in every scenario)`,
    );
    for (const r of doomed)
      console.log(
        `  ${r.name.padEnd(22)} floor req/s ${r.floor!.toFixed(0).padStart(6)}  floor/hello ${r.floorRatio!.toFixed(2)}  floor workerd CPU µs/req ${String(r.floorCpuUsPerRequest ?? '-').padStart(4)}  ` +
          `edge workerd CPU µs/req ${String(r.workerdCpuUsPerRequest ?? '-').padStart(4)}  edge/floor ${r.ratioToFloor!.toFixed(2)} — ${r.ratioToFloor! >= FLOOR_GOAL ? 'met' : 'NOT met'}`,
      );
  }
  const worstRatioToFloor = floorUrl ? Math.min(...doomed.map((r) => r.ratioToFloor!)) : null;
  const floorRps = floors.length ? [...floors].sort((a, b) => a.rps - b.rps)[Math.floor(floors.length / 2)]!.rps : null;
  const worstRatio = Math.min(...doomed.map((r) => r.ratio));
  const rule = rounds > 1 ? " (worst of the scenarios' medians)" : '';
  const calls = doomed.reduce((n, r) => n + r.originCalls, 0);
  console.log('');
  console.log(
    `worst doomed/hello ratio${rule}: ${worstRatio.toFixed(2)} (goal ≥ 0.75) — ${worstRatio >= 0.75 ? 'met' : 'NOT met'}`,
  );
  console.log(`origin calls during doomed load: ${calls} (must be 0) — ${calls === 0 ? 'ok' : 'FAILED'}`);
  const unexpected = doomed.filter((r) => r.unexpected > 0);
  if (unexpected.length)
    console.log(`unexpected answers: ${unexpected.map((r) => `${r.name} ${JSON.stringify(r.statuses)}`).join('; ')}`);
  if (worstRatioToFloor !== null)
    console.log(
      `worst edge/floor ratio (each scenario's median): ${worstRatioToFloor.toFixed(2)} (goal ≥ ${FLOOR_GOAL}) — ${worstRatioToFloor >= FLOOR_GOAL ? 'met' : 'NOT met'}`,
    );
  if (calls !== 0) process.exitCode = 1;
  return {
    helloRps: hello.rps,
    worstRatio,
    floor: floorRps,
    ratioToFloor: worstRatioToFloor,
    originCalls: calls,
    scenarios: [hello, ...doomed],
  };
}

/** One Durable Object call per request, by RPC and by fetch, against no call at all (see `--do-call`). */
export async function benchDurableObjectCall(): Promise<
  { name: string; rps: number; ratio: number; cpuUs: number | null }[]
> {
  const script = `
import { DurableObject } from 'cloudflare:workers';
export class Gate extends DurableObject {
  buckets = new Map();
  admit(key, rate, userId) {
    const now = Date.now();
    const b = this.buckets.get(key);
    const tokens = b ? Math.min(1, b.tokens + ((now - b.at) * rate) / 1000) : 1;
    if (tokens < 1) return { ok: false, retryAfterMs: Math.ceil(((1 - tokens) * 1000) / rate) };
    this.buckets.set(key, { tokens: tokens - 1, at: now });
    return { ok: true, emptyForMs: 1000 };
  }
  async fetch(req) {
    const { key, rate, userId } = await req.json();
    return Response.json(this.admit(key, rate, userId));
  }
}
let n = 0;
export default {
  async fetch(req, env) {
    const path = new URL(req.url).pathname;
    if (path === '/none') return new Response('{"ok":true}');
    const user = String(10000000 + (n++ % 500));
    const stub = env.GATE.get(env.GATE.idFromName('user-gate-' + (n % 16)));
    const key = 'purchase:700002:' + user;
    const answer = path === '/rpc'
      ? await stub.admit(key, 0.01, user)
      : await (await stub.fetch('https://gate/admit', { method: 'POST', body: JSON.stringify({ key, rate: 0.01, userId: user }) })).json();
    return new Response(JSON.stringify(answer));
  },
};`;
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: COMPATIBILITY_DATE,
    durableObjects: { GATE: { className: 'Gate', useSQLite: true } },
    host: '127.0.0.1',
    port: 0,
    cf: false,
  });
  try {
    const url = (await mf.ready).toString().replace(/\/$/, '');
    const rows: { name: string; rps: number; ratio: number; cpuUs: number | null }[] = [];
    for (const [name, path] of [
      ['no call', '/none'],
      ['DO call by RPC', '/rpc'],
      ['DO call by fetch', '/fetch'],
    ] as const) {
      const before = workerdCpuMs();
      const result = await autocannon({ url: url + path, connections, duration });
      const after = workerdCpuMs();
      rows.push({
        name,
        rps: result.requests.average,
        ratio: 0,
        cpuUs: cpuUsPerRequest(before, after, result.requests.total),
      });
    }
    console.log(`DO call: ${connections} connections, ${duration} s per run`);
    console.log('worker                 req/s  ratio  workerd CPU µs/req');
    for (const r of rows) {
      r.ratio = r.rps / rows[0]!.rps;
      console.log(
        `${r.name.padEnd(20)} ${r.rps.toFixed(0).padStart(7)}  ${r.ratio.toFixed(2).padStart(5)}  ${String(r.cpuUs ?? '-').padStart(18)}`,
      );
    }
    return rows;
  } finally {
    await mf.dispose();
  }
}

runAsScript(import.meta.url, () => (options['do-call'] ? benchDurableObjectCall() : benchEdgeDoomed()));
