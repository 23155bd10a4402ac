/**
 * What the rehearsal saw, in bounded memory: counts and latency histograms per outcome
 * (`<step> <status> <code>`), a per-second timeline, and the facts the verdict needs — every
 * reservation the edge granted (≤ stock + refills) and any idempotency breach.
 */
import { LatencyHistogram } from './histogram.js';

export type Step = 'ticket' | 'purchase' | 'poll' | 'lookup' | 'payment';

/** Per-second buckets of the throughput chart. */
export const SERIES = ['reserved', 'repeat', 'ok', 'rejected', 'busy', 'failed'] as const;
export type Series = (typeof SERIES)[number];

export function seriesOf(step: Step, status: number): Series {
  if (status === 0 || status >= 500) return status === 503 ? 'busy' : 'failed';
  if (step === 'purchase' && status === 202) return 'reserved';
  if (step === 'purchase' && status === 200) return 'repeat';
  if (status < 400) return 'ok';
  return 'rejected';
}

export class Recorder {
  /** ms since epoch of the sale's start (t0). */
  constructor(readonly startsAt: number) {}

  requests = 0;
  readonly outcomes = new Map<string, { step: Step; status: number; code: string; latency: LatencyHistogram }>();
  /** second since t0 (may be negative) → counts per series. */
  readonly timeline = new Map<number, Record<Series, number>>();
  /** reservationId → userId of every 202. */
  readonly reservations = new Map<string, string>();
  /** userId → reservationId, to check repeats answer with the same reservation. */
  readonly holders = new Map<string, string>();
  readonly breaches: string[] = [];
  usersArrived = 0;
  usersWithTicket = 0;
  firstSoldOutAt: number | null = null;
  lastReservedAt: number | null = null;
  lastRequestAt = 0;

  record(step: Step, status: number, code: string, ms: number): void {
    const now = Date.now();
    this.requests++;
    this.lastRequestAt = now;
    const key = `${step} ${status} ${code}`;
    let o = this.outcomes.get(key);
    if (!o) this.outcomes.set(key, (o = { step, status, code, latency: new LatencyHistogram() }));
    o.latency.record(ms);
    const second = Math.floor((now - this.startsAt) / 1000);
    let bucket = this.timeline.get(second);
    if (!bucket)
      this.timeline.set(second, (bucket = { reserved: 0, repeat: 0, ok: 0, rejected: 0, busy: 0, failed: 0 }));
    bucket[seriesOf(step, status)]++;
    if (code === 'sold_out' && this.firstSoldOutAt === null) this.firstSoldOutAt = now;
  }

  /** Reservations the client learnt of only by looking them up after an ambiguous answer (503 unavailable). */
  foundByLookup = 0;
  /** Reservations answered 202, and those first seen on a repeat (200) because the 202 never came. */
  granted202 = 0;
  firstSeenOnRepeat = 0;
  /** A holder's repeat purchase answered with a refusal (e.g. the edge's sold-out flag), by code. */
  readonly holderRepeatsRefused = new Map<string, number>();

  /** A purchase answered with a reservation: new (202) or a repeat (200); or a lookup found one after an ambiguous answer. */
  reserved(userId: string, reservationId: string, status: number, via: 'purchase' | 'lookup' = 'purchase'): void {
    const held = this.holders.get(userId);
    if (via === 'lookup') this.foundByLookup++;
    if (status === 202 && via === 'purchase') this.granted202++;
    if (status === 202) {
      if (held && held !== reservationId)
        this.breaches.push(`user ${userId} got a second reservation ${reservationId} (already held ${held})`);
      this.reservations.set(reservationId, userId);
      this.holders.set(userId, held ?? reservationId);
      if (via === 'purchase') this.lastReservedAt = Date.now();
    } else if (held && held !== reservationId) {
      this.breaches.push(`user ${userId}'s repeat answered ${reservationId}, not the held ${held}`);
    } else if (!held) {
      // A repeat is the first answer this user got with a reservation (the 202 was a 503 or lost): still granted.
      this.reservations.set(reservationId, userId);
      this.holders.set(userId, reservationId);
      this.firstSeenOnRepeat++;
    }
  }

  count(step: Step, pred: (status: number, code: string) => boolean = () => true): number {
    let n = 0;
    for (const o of this.outcomes.values()) if (o.step === step && pred(o.status, o.code)) n += o.latency.count;
    return n;
  }
}
