/**
 * The switch drill under load (docs/rehearsal.md "The switch drill"): while the crowd buys at the
 * planned peak, the switches a sale-day operator uses are flipped on the shadow sale through the
 * admin API — pause and reopen, a lower user rate, the sold-out threshold, the per-user limit,
 * eligibility — each followed by its way back. For each flip, when it took effect at the edge,
 * counted from the admin API's answer and bounded from both sides by the probe clicks: after the
 * latest-sent click that still disobeyed (`notBeforeMs`: the edge handled it no earlier than it was
 * sent) and no later than the first answer of a click that obeyed (`answeredMs`). Probes are fresh
 * shadow users, one every `probeEveryMs`; a flip not obeyed within `effectTimeoutMs` did not take
 * effect. The bar, DRILL_EFFECT_LIMIT_MS, is met only when proven (`answeredMs` within it); a flip
 * known to have come later (`notBeforeMs` past it) failed; one whose bounds straddle the bar (the
 * probes' own answer time under load is longer than the bar) is unproven, and fails the drill too.
 */
import type { Answer, HttpClient } from './client.js';
import type { DrillOptions } from './ramp-options.js';
import type { Recorder } from './recorder.js';

/** The seeds' bar: a switch takes effect in real time, within a second of the operator's change. */
export const DRILL_EFFECT_LIMIT_MS = 1000;
/** Probe clicks in flight at most while a flip is awaited. */
export const PROBES_IN_FLIGHT = 16;
/** Claim of the members-only rule the drill switches on (no token of the crowd carries it). */
const DRILL_CLAIM = { claim: 'rehearsal_drill', values: ['member'] };

export interface SwitchResult {
  name: string;
  patch: Record<string, unknown>;
  /** ms from the admin answer to the sending of the first obeying click; null: not obeyed in time. */
  effectMs: number | null;
  /** ms to the first answer of an obeying click: the switch was in effect by then (upper bound). */
  answeredMs: number | null;
  /** ms to the sending of the latest click that still disobeyed: not in effect before (lower bound; 0: none). */
  notBeforeMs: number;
  probes: number;
  ok: boolean;
  note?: string;
}

export interface DrillReport {
  limitMs: number;
  switches: SwitchResult[];
  ok: boolean;
  failures: string[];
}

export interface DrillDeps {
  activityId: string;
  edge: HttpClient;
  /** The admin API (PATCH /admin/activities/:id, GET the same). */
  admin: <T>(method: string, path: string, body?: unknown) => Promise<T>;
  /** A shadow token for a probe user. */
  mint: (userId: string) => string;
  firstProbeUser: number;
  rec: Recorder;
  /** The guard stopped the rehearsal: no more probing (each switch is still put back). */
  aborted: () => boolean;
}

type Probe = (userId: string) => Promise<boolean>;
interface Flip {
  name: string;
  patch: Record<string, unknown>;
  probe: Probe | null;
  note?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pair of back-to-back tickets obeys a user rate when the second answers as that rate's bucket does. */
export function obeysRate(second: Answer, ratePerSec: number): boolean {
  // The gate's bucket holds max(1, rate) tokens (edge/durable/user-gate.ts).
  if (Math.max(1, ratePerSec) >= 2) return second.status === 200;
  return second.status === 429 && Math.round(second.retryAfterMs / 1000) === Math.ceil(1 / ratePerSec);
}

/** Whether a ticket pair can tell rate `a` from rate `b` (see obeysRate). */
export function ratesDistinguishable(a: number, b: number): boolean {
  const twoA = Math.max(1, a) >= 2;
  const twoB = Math.max(1, b) >= 2;
  return twoA !== twoB || (!twoA && Math.ceil(1 / a) !== Math.ceil(1 / b));
}

export async function runDrill(d: DrillDeps, o: DrillOptions): Promise<DrillReport> {
  const path = `/admin/activities/${d.activityId}`;
  const sale = await d.admin<{ config: Record<string, any> }>('GET', path);
  const rate0 = Number(sale.config.userRatePerSec);
  const rate1 = o.userRate ?? rate0 / 4;
  const max0 = Number(sale.config.maxPerUser);
  const threshold0 = Number(sale.config.soldOutThreshold ?? 0);
  const eligibility0 = sale.config.eligibility ?? null;

  let probeUser = d.firstProbeUser;
  const auth = (userId: string) => ({ authorization: `Bearer ${d.mint(userId)}` });
  const ticket = (userId: string) => d.edge.request('POST', `/api/activities/${d.activityId}/tickets`, auth(userId));
  const ticketIs =
    (pred: (a: Answer) => boolean): Probe =>
    async (u) =>
      pred(await ticket(u));
  const pair =
    (rate: number): Probe =>
    async (u) => {
      await ticket(u);
      return obeysRate(await ticket(u), rate);
    };
  const purchaseOf =
    (quantity: number, pred: (a: Answer) => boolean): Probe =>
    async (u) => {
      const t = await ticket(u);
      if (t.status !== 200) return false;
      const r = await d.edge.request(
        'POST',
        t.body.purchaseUrl as string,
        { ...auth(u), 'idempotency-key': `${d.activityId}-drill-${u}`, 'content-type': 'application/json' },
        JSON.stringify({ quantity }),
      );
      // A probe's reservation is the rehearsal's like any: settlement must account for it.
      if (r.status === 202) d.rec.reserved(u, r.body.reservationId as string, 202);
      return pred(r);
    };
  const ok200 = ticketIs((a) => a.status === 200);
  const canRaise = max0 < 100;
  const flips: [Flip, Flip][] = [
    [
      { name: 'pause', patch: { state: 'paused' }, probe: ticketIs((a) => a.code === 'paused') },
      { name: 'reopen', patch: { state: 'open' }, probe: ok200 },
    ],
    [
      {
        name: `user rate lowered to ${rate1}/s`,
        patch: { userRatePerSec: rate1 },
        probe: ratesDistinguishable(rate0, rate1) ? pair(rate1) : null,
        note: ratesDistinguishable(rate0, rate1) ? undefined : `a ticket pair cannot tell ${rate1}/s from ${rate0}/s`,
      },
      {
        name: `user rate restored to ${rate0}/s`,
        patch: { userRatePerSec: rate0 },
        probe: ratesDistinguishable(rate0, rate1) ? pair(rate0) : null,
      },
    ],
    [
      {
        name: 'sold-out threshold raised (answer sold out)',
        patch: { soldOutThreshold: 100_000_000 },
        probe: ticketIs((a) => a.code === 'sold_out'),
      },
      { name: `sold-out threshold restored to ${threshold0}`, patch: { soldOutThreshold: threshold0 }, probe: ok200 },
    ],
    [
      {
        name: `per-user limit raised to ${max0 + 1}`,
        patch: { maxPerUser: max0 + 1 },
        probe: canRaise ? purchaseOf(max0 + 1, (a) => a.status === 202 || a.status === 200) : null,
        note: canRaise ? undefined : 'the limit is already the largest allowed',
      },
      {
        name: `per-user limit restored to ${max0}`,
        patch: { maxPerUser: max0 },
        probe: canRaise ? purchaseOf(max0 + 1, (a) => a.code === 'limit_exceeded') : null,
      },
    ],
    eligibility0 === null
      ? [
          {
            name: 'eligibility on (members only)',
            patch: { eligibility: DRILL_CLAIM },
            probe: ticketIs((a) => a.code === 'not_eligible'),
          },
          { name: 'eligibility off', patch: { eligibility: null }, probe: ok200 },
        ]
      : [
          { name: 'eligibility off', patch: { eligibility: null }, probe: ok200 },
          {
            name: 'eligibility restored',
            patch: { eligibility: eligibility0 },
            probe: ticketIs((a) => a.code === 'not_eligible'),
          },
        ],
  ];

  const switches: SwitchResult[] = [];
  const flip = async (f: Flip): Promise<void> => {
    const base = { name: f.name, patch: f.patch, probes: 0 };
    let answeredAt: number;
    try {
      await d.admin('PATCH', path, f.patch);
      answeredAt = Date.now();
    } catch (err) {
      switches.push({
        ...base,
        effectMs: null,
        answeredMs: null,
        notBeforeMs: 0,
        ok: false,
        note: `the admin API refused: ${(err as Error).message}`,
      });
      return;
    }
    if (!f.probe || d.aborted()) {
      const note = f.note ?? (d.aborted() ? 'not measured: the guard stopped the rehearsal' : 'not measured');
      switches.push({ ...base, effectMs: null, answeredMs: null, notBeforeMs: 0, ok: !f.probe, note });
      return;
    }
    const probe = f.probe;
    const hit = await awaitEffect(() => probe(String(probeUser++)), answeredAt, o, d.aborted);
    const ok = hit.answeredMs !== null && hit.answeredMs <= DRILL_EFFECT_LIMIT_MS;
    const unproven = hit.answeredMs !== null && !ok && hit.notBeforeMs <= DRILL_EFFECT_LIMIT_MS;
    switches.push({
      ...base,
      ...hit,
      ok,
      ...(unproven
        ? {
            note: `unproven: in effect between ${hit.notBeforeMs} and ${hit.answeredMs} ms — the probes' own answers took longer than the bar`,
          }
        : {}),
    });
  };
  for (const [there, back] of flips) {
    try {
      await flip(there);
    } finally {
      // Always put the switch back, whatever happened to the first flip.
      await flip(back);
    }
  }
  const failures = switches
    .filter((s) => !s.ok)
    .map((s) =>
      s.answeredMs === null
        ? `${s.name}: ${s.note ?? `not obeyed at the edge within ${o.effectTimeoutMs / 1000} s`}`
        : (s.note ??
          `${s.name}: took over ${(s.notBeforeMs / 1000).toFixed(2)} s (bar ${DRILL_EFFECT_LIMIT_MS / 1000} s)`),
    );
  return { limitMs: DRILL_EFFECT_LIMIT_MS, switches, ok: failures.length === 0, failures };
}

/**
 * Probes until one obeys, the timeout, or the guard; then waits for the probes in flight, which
 * narrow the bounds: the earliest-sent and the first-answered obeying click, the latest-sent
 * disobeying one.
 */
async function awaitEffect(
  probe: () => Promise<boolean>,
  since: number,
  o: DrillOptions,
  aborted: () => boolean,
): Promise<{ effectMs: number | null; answeredMs: number | null; notBeforeMs: number; probes: number }> {
  const deadline = since + o.effectTimeoutMs;
  const inFlight = new Set<Promise<void>>();
  const hit: { sentAt: number | null; answeredAt: number | null; disobeyedSentAt: number } = {
    sentAt: null,
    answeredAt: null,
    disobeyedSentAt: since,
  };
  let probes = 0;
  while (hit.sentAt === null && Date.now() < deadline && !aborted()) {
    if (inFlight.size < PROBES_IN_FLIGHT) {
      const sentAt = Date.now();
      probes++;
      const p: Promise<void> = probe()
        .then(
          (obeyed) => {
            if (!obeyed) hit.disobeyedSentAt = Math.max(hit.disobeyedSentAt, sentAt);
            else {
              if (hit.sentAt === null || sentAt < hit.sentAt) hit.sentAt = sentAt;
              hit.answeredAt ??= Date.now();
            }
          },
          () => undefined,
        )
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await sleep(o.probeEveryMs);
  }
  await Promise.all(inFlight);
  return {
    effectMs: hit.sentAt === null ? null : Math.max(0, hit.sentAt - since),
    answeredMs: hit.answeredAt === null ? null : hit.answeredAt - since,
    notBeforeMs: hit.disobeyedSentAt - since,
    probes,
  };
}
