/**
 * The rehearsal's result: one JSON-able object (funnel, latency per outcome, timeline, settlement,
 * verdict), its console summary, and the files report.json + report.html.
 */
import { summarizeLoad, type LoadSample } from './monitor.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LatencyHistogram } from './histogram.js';
import type { RehearsalOptions } from './options.js';
import { SERIES, type Recorder, type Step } from './recorder.js';
import type { SettlementFacts } from './settlement.js';
import { renderHtml, settleText } from './report-html.js';
import type { OrderSuccess } from './baseline.js';
import type { FunnelRow, Report, ShadowRun } from './report-shape.js';
import { shadowRunLines } from './report-ramp.js';
import { stackCost, stackCostText } from './stack-cost.js';

export type { Report } from './report-shape.js';

export function buildReport(args: {
  o: RehearsalOptions;
  command: string;
  startedAt: number;
  activityId: string;
  saleStartsAt: number;
  stack: { own: boolean; edgeUrl: string; originUrl: string };
  rec: Recorder;
  maxArrivalLagMs: number;
  loadEndedAt: number;
  facts: SettlementFacts;
  settledSamples: [number, number][];
  /** Per-second samples of each generator process (coordinator first). */
  generators: LoadSample[][];
  orderSuccess: OrderSuccess | null;
  shadowRun?: ShadowRun | null;
  /** Our own stack's CPU over the load (edge) and to the last order (origin), and the hello run; null for an existing stack. */
  cpu?: { edgeCpuMs: number; originCpuMs: number; hello: { cpuUsPerRequest: number; requests: number } | null } | null;
}): Report {
  const { o, rec, facts } = args;
  const { adminToken: _a, userTokenSecret: _u, paymentSecret: _p, metricsToken: _m, ...options } = o;
  const edgeSteps = new Set(['ticket', 'purchase', 'poll', 'lookup', 'wait']);
  const outcomes = [...rec.outcomes.values()]
    .map((x) => ({ step: x.step, status: x.status, code: x.code, ...x.latency.summary() }))
    .sort((a, b) => b.count - a.count);
  const edgeRequests = outcomes.filter((x) => edgeSteps.has(x.step)).reduce((s, x) => s + x.count, 0);
  const seconds = [...rec.timeline.keys()].sort((a, b) => a - b);
  const timeline = seconds.length
    ? Array.from({ length: seconds.at(-1)! - seconds[0]! + 1 }, (_, i) => {
        const second = seconds[0]! + i;
        const b = rec.timeline.get(second);
        return { second, ...Object.fromEntries(SERIES.map((s) => [s, b?.[s] ?? 0])) } as Report['timeline'][number];
      })
    : [];
  const firstSecond = seconds[0] ?? 0;
  const loadSeconds = Math.max(0.001, (rec.lastRequestAt - (args.saleStartsAt + firstSecond * 1000)) / 1000);
  const p99Of = (pred: (step: string) => boolean) =>
    LatencyHistogram.combine([...rec.outcomes.values()].filter((x) => pred(x.step)).map((x) => x.latency)).summary()
      .p99;

  const c = (step: Step, pred: (status: number, code: string) => boolean) => rec.count(step, pred);
  const reject = (label: string, pred: (status: number, code: string) => boolean): FunnelRow => ({
    label,
    count: c('ticket', pred) + c('purchase', pred),
    kind: 'reject',
  });
  const tickets = c('ticket', () => true);
  const purchases = c('purchase', () => true);
  const funnel: FunnelRow[] = [
    { label: 'users arrived', count: rec.usersArrived, kind: 'in' },
    { label: 'ticket + purchase requests at the edge', count: tickets + purchases, kind: 'in' },
    reject('edge · 400/401 bad request or token', (s) => s === 400 || s === 401),
    reject('edge · 403 bad_ticket (forged / shared)', (s, k) => s === 403 && k === 'bad_ticket'),
    reject('edge · 425 too_early', (s) => s === 425),
    reject('edge · 410 ended / 503 paused', (_, k) => k === 'ended' || k === 'paused'),
    reject('edge · 409 sold_out (flag) or origin sold_out', (_, k) => k === 'sold_out'),
    reject('edge · 429 rate_limited (per user)', (s) => s === 429),
    reject('edge · 503 busy (admission)', (_, k) => k === 'busy'),
    reject('origin · 409 limit_exceeded', (_, k) => k === 'limit_exceeded'),
    reject('origin · 503 unavailable / not_ready', (_, k) => k === 'unavailable' || k === 'not_ready'),
    reject(
      'other 5xx / network errors',
      (s, k) => (s >= 500 || s === 0) && !['busy', 'paused', 'unavailable', 'not_ready'].includes(k),
    ),
    { label: 'tickets issued (200)', count: c('ticket', (s) => s === 200), kind: 'pass' },
    ...waitingRoomRows(rec),
    { label: 'purchases repeated → same reservation (200)', count: c('purchase', (s) => s === 200), kind: 'pass' },
    { label: 'reserved at the edge (202)', count: rec.granted202, kind: 'pass' },
    { label: '… first seen on a repeat (200) after 503 unavailable', count: rec.firstSeenOnRepeat, kind: 'pass' },
    { label: '… found by lookup after 503 unavailable', count: rec.foundByLookup, kind: 'pass' },
    { label: 'settled: orders in MySQL', count: facts.orders.total, kind: 'pass' },
    { label: 'dead-lettered', count: facts.deadLetters, kind: 'end' },
    { label: 'paid (webhook)', count: facts.orders.paid, kind: 'end' },
    { label: 'timed out (units refilled)', count: facts.orders.timeout, kind: 'end' },
    { label: 'pending payment', count: facts.orders.pending, kind: 'end' },
  ];

  const problems: string[] = [];
  const notes: string[] = [];
  if (facts.orders.liveUnits > o.stock)
    problems.push(`OVERSOLD: ${facts.orders.liveUnits} live units > stock ${o.stock}`);
  if (facts.orders.total > o.stock && facts.orders.timeout === 0)
    problems.push(`OVERSOLD: ${facts.orders.total} orders > stock ${o.stock}`);
  if (facts.usersWithTwoOrders > 0) problems.push(`OVERSOLD: ${facts.usersWithTwoOrders} users with 2+ orders`);
  if (facts.lost.length > 0)
    problems.push(`LOST: ${facts.lost.length} reservations granted (202) but neither settled nor dead-lettered`);
  if (!facts.settled) problems.push(`NOT SETTLED within ${o.settleTimeoutMs / 1000} s`);
  if (!facts.reconciliation.ok)
    problems.push(
      `UNRECONCILED: ${facts.reconciliation.checks
        .filter((x) => !x.ok)
        .map((x) => x.name)
        .join(', ')}`,
    );
  for (const b of rec.breaches.slice(0, 20)) problems.push(`IDEMPOTENCY: ${b}`);
  if (rec.breaches.length > 20) problems.push(`IDEMPOTENCY: … ${rec.breaches.length - 20} more`);
  if (args.shadowRun?.drill)
    notes.push(
      "the switch drill's sold-out threshold answered sold_out on purpose: the time to sold out and the sold-out notes are the drill's",
    );
  else if (rec.firstSoldOutAt === null) notes.push('never sold out: the crowd did not buy the whole stock');
  else if (facts.orders.total + facts.deadLetters < o.stock && facts.orders.timeout === 0)
    notes.push(`undersold: ${facts.orders.total} orders for ${o.stock} units although the sale answered sold_out`);
  if (facts.ordersWithoutAnswer > 0)
    notes.push(
      `${facts.ordersWithoutAnswer} orders whose holders never learnt of them (answered 503 unavailable or lost, and their lookup failed too)`,
    );
  if (rec.holderRepeatsRefused.size > 0)
    notes.push(
      `holders' repeat purchases were refused (${[...rec.holderRepeatsRefused].map(([k, v]) => `${v} × ${k}`).join(', ')}) instead of answered 200 with their reservation (docs/design.md §3); they found it by lookup. A sold_out before the ticket check is docs/design.md §10's order (the public state first); an expired ticket is refused by contract`,
    );
  if (rec.foundByLookup > 0)
    notes.push(
      `${rec.foundByLookup} reservations were made although the purchase was answered 503 unavailable (the edge's origin call or the origin's Redis call timed out after the reservation was made); their holders found them by lookup`,
    );
  const load = summarizeLoad(args.generators, -o.leadMs, args.loadEndedAt - args.saleStartsAt);
  if (args.maxArrivalLagMs > 1000)
    notes.push(
      `the load generator fell behind the arrival curve by up to ${(args.maxArrivalLagMs / 1000).toFixed(1)} s (${load.unreliable.length ? 'the generator or the machine was saturated, see below' : `the stack was saturated: ${o.concurrency} requests in flight at most`})`,
    );
  for (const why of load.unreliable) notes.push(`UNRELIABLE FIGURES: ${why}`);

  const { lost, ...settlementRest } = facts;
  const t0 = args.saleStartsAt;
  return {
    command: args.command,
    startedAt: new Date(args.startedAt).toISOString(),
    activityId: args.activityId,
    stack: args.stack,
    options,
    figures: {
      users: o.users,
      usersArrived: rec.usersArrived,
      usersWithTicket: rec.usersWithTicket,
      usersReserved: rec.holders.size,
      stock: o.stock,
      edgeRequests,
      loadSeconds: Math.round(loadSeconds * 10) / 10,
      edgeRequestsPerSecond: Math.round(edgeRequests / loadSeconds),
      peakRequestsPerSecond: Math.max(0, ...timeline.map((t) => SERIES.reduce((s, k) => s + t[k], 0))),
      timeToSoldOutMs: rec.firstSoldOutAt === null ? null : rec.firstSoldOutAt - t0,
      lastReservationMs: rec.lastReservedAt === null ? null : rec.lastReservedAt - t0,
      settleMs: facts.settleMs,
      maxArrivalLagMs: Math.round(args.maxArrivalLagMs),
      purchaseP99Ms: p99Of((step) => step === 'purchase'),
      allRequestsP99Ms: p99Of((step) => edgeSteps.has(step)),
    },
    orderSuccess: args.orderSuccess,
    funnel,
    waitingRoom: rec.waitingRoom.waited > 0 ? rec.waitingRoom.report() : undefined,
    outcomes,
    timeline,
    settledOverTime: args.settledSamples,
    settlement: { ...settlementRest, lostCount: lost.length, lostSample: lost.slice(0, 20) },
    load: { summary: load, generators: args.generators },
    stackCost: args.cpu ? stackCost({ ...args.cpu, edgeRequests, orders: facts.orders.total }) : null,
    verdict: { ok: problems.length === 0, problems, notes },
    ...(args.shadowRun ? { shadowRun: args.shadowRun } : {}),
  };
}

/** The waiting room's rows of the funnel (`--overflow queue`); none when nobody waited. */
function waitingRoomRows(rec: Recorder): FunnelRow[] {
  const w = rec.waitingRoom;
  if (w.waited === 0) return [];
  return [
    { label: 'waiting room · waited (202 waiting)', count: w.waited, kind: 'pass' },
    { label: 'waiting room · left with a result (turn or sale closed)', count: w.admitted, kind: 'pass' },
    { label: 'waiting room · … of which reserved', count: w.reserved, kind: 'pass' },
    { label: 'waiting room · … of which sold_out', count: w.soldOut, kind: 'reject' },
    { label: 'waiting room · dropped (404: not polled in time)', count: w.dropped, kind: 'reject' },
    { label: "waiting room · gave up (past the run's tail)", count: w.gaveUp, kind: 'reject' },
  ];
}

const pctOf = (share: number) => `${Math.round(share * 100)} %`;
const n = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toLocaleString('en-US'));
const s = (ms: number | null) => (ms === null ? '—' : `${(ms / 1000).toFixed(2)} s`);

export function printReport(r: Report): void {
  const f = r.figures;
  const out: string[] = [];
  out.push(
    '',
    `Rehearsal: ${n(f.users)} users, ${n(f.stock)} units, curve ${r.options.curve}, activity ${r.activityId}`,
  );
  out.push('', 'Funnel');
  for (const row of r.funnel)
    out.push(
      `  ${row.kind === 'reject' ? '  − ' : row.kind === 'end' ? '  → ' : ''}${row.label.padEnd(50)} ${n(row.count).padStart(12)}`,
    );
  if (r.waitingRoom) {
    const w = r.waitingRoom;
    const peak = Math.max(0, ...w.line.map((l) => l.waiting));
    out.push(
      '',
      `Waiting room: ${n(w.waited)} waited, ${n(w.admitted)} left with a result (${n(w.reserved)} reserved, ${n(w.soldOut)} sold out), ${n(w.dropped)} dropped, ${n(w.gaveUp)} gave up`,
      `  time in line  p50 ${s(w.timeInLine.p50)}  p90 ${s(w.timeInLine.p90)}  p99 ${s(w.timeInLine.p99)}  max ${s(w.timeInLine.max)}; longest line ${n(peak)}`,
      `  line over time (s: waiting) ${w.line
        .filter((_, i) => i % Math.max(1, Math.ceil(w.line.length / 20)) === 0)
        .map((l) => `${l.second}:${l.waiting}`)
        .join(' ')}`,
    );
  }
  out.push('', 'Latency (ms) per outcome            count       p50      p90      p99      max');
  for (const o of r.outcomes)
    out.push(
      `  ${`${o.step} ${o.status} ${o.code}`.padEnd(30)} ${n(o.count).padStart(10)} ${o.p50.toFixed(1).padStart(9)} ${o.p90.toFixed(1).padStart(8)} ${o.p99.toFixed(1).padStart(8)} ${o.max.toFixed(1).padStart(8)}`,
    );
  if (r.orderSuccess)
    out.push(
      '',
      `Order success rate (decided answers of POST /internal/reserve): ${r.orderSuccess.rate === null ? '—' : `${(r.orderSuccess.rate * 100).toFixed(2)} %`} (${n(r.orderSuccess.decided)} of ${n(r.orderSuccess.total)})`,
    );
  out.push('', 'Figures');
  out.push(
    `  requests at the edge       ${n(f.edgeRequests)} in ${f.loadSeconds} s = ${n(f.edgeRequestsPerSecond)} req/s (peak ${n(f.peakRequestsPerSecond)}/s)`,
  );
  out.push(
    `  time to sold out           ${s(f.timeToSoldOutMs)} after the start (last reservation ${s(f.lastReservationMs)})`,
  );
  out.push(`  time to settle             ${settleText(f.settleMs)} after the last reservation (probed every 0.5 s)`);
  out.push(
    `  purchase p99               ${f.purchaseP99Ms.toFixed(1)} ms; all edge requests p99 ${f.allRequestsP99Ms.toFixed(1)} ms`,
  );
  out.push(
    `  orders                     ${n(r.settlement.orders.total)} (paid ${n(r.settlement.orders.paid)}, timeout ${n(r.settlement.orders.timeout)}, pending ${n(r.settlement.orders.pending)}); users with 2 orders ${r.settlement.usersWithTwoOrders}; lost ${r.settlement.lostCount}`,
  );
  out.push(`  reconciliation             ${r.settlement.reconciliation.ok ? 'ok' : 'MISMATCH'}`);
  const l = r.load.summary;
  out.push(
    `  load generator             ${r.load.generators.length} process(es); CPU max ${pctOf(l.generatorCpuMax)} of a core (mean ${pctOf(l.generatorCpuMean)}); event-loop delay p99 up to ${l.loopDelayP99MaxMs.toFixed(0)} ms`,
  );
  out.push(
    `  machine                    ${l.cores} cores; CPU mean ${pctOf(l.machineCpuMean)}, max ${pctOf(l.machineCpuMax)}; load average up to ${l.load1Max.toFixed(1)}`,
  );
  for (const [name, p] of Object.entries(l.procs))
    out.push(
      `  ${name.padEnd(26)} CPU mean ${pctOf(p.cpuMean)}, max ${pctOf(p.cpuMax)} of a core; RSS up to ${p.rssMbMax} MB`,
    );
  if (r.stackCost) out.push(`  ${'CPU per unit of work'.padEnd(26)} ${stackCostText(r.stackCost)}`);
  for (const note of r.verdict.notes) out.push(`  note: ${note}`);
  if (r.shadowRun) out.push(...shadowRunLines(r.shadowRun));
  out.push('', r.verdict.ok ? 'VERDICT: ok — nothing oversold, nothing lost, reconciled' : 'VERDICT: FAILED');
  for (const p of r.verdict.problems) out.push(`  ${p}`);
  console.log(out.join('\n'));
}

export function writeReport(r: Report, dir: string): { json: string; html: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, 'report.json');
  const html = join(dir, 'report.html');
  writeFileSync(json, JSON.stringify(r, null, 2));
  writeFileSync(html, renderHtml(r));
  return { json, html };
}
