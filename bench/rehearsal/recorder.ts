/**
 * What the rehearsal saw, in bounded memory: counts and latency histograms per outcome
 * (`<step> <status> <code>`), a per-second timeline, and the facts the verdict needs — every
 * reservation the edge granted (≤ stock + refills) and any idempotency breach.
 */
import { LatencyHistogram } from './histogram.js';
import { WaitingRoomStats } from './waiting-room.js';

export type Step = 'ticket' | 'purchase' | 'poll' | 'lookup' | 'payment' | 'wait';

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
  constructor(readonly startsAt: number) {
    this.waitingRoom = new WaitingRoomStats(startsAt);
  }

  /** `--overflow queue`: the waiting room as the crowd saw it. */
  readonly waitingRoom: WaitingRoomStats;

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
    // A place in line is not a reservation: it counts as a plain success in the chart.
    bucket[code === 'waiting' ? 'ok' : seriesOf(step, status)]++;
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
  /** Lottery: purchases answered `entered` (new entries; repeats answer 200 with the same entry). */
  entered = 0;

  reserved(
    userId: string,
    reservationId: string,
    status: number,
    via: 'purchase' | 'lookup' | 'draw' = 'purchase',
  ): void {
    const held = this.holders.get(userId);
    if (via === 'lookup') this.foundByLookup++;
    if (status === 202 && via === 'purchase') this.granted202++;
    if (status === 202) {
      if (held && held !== reservationId)
        this.breaches.push(`user ${userId} got a second reservation ${reservationId} (already held ${held})`);
      this.reservations.set(reservationId, userId);
      this.fresh.push([reservationId, userId]);
      this.holders.set(userId, held ?? reservationId);
      if (via === 'purchase') this.lastReservedAt = Date.now();
    } else if (held && held !== reservationId) {
      this.breaches.push(`user ${userId}'s repeat answered ${reservationId}, not the held ${held}`);
    } else if (!held) {
      // A repeat is the first answer this user got with a reservation (the 202 was a 503 or lost): still granted.
      this.reservations.set(reservationId, userId);
      this.fresh.push([reservationId, userId]);
      this.holders.set(userId, reservationId);
      this.firstSeenOnRepeat++;
    }
  }

  count(step: Step, pred: (status: number, code: string) => boolean = () => true): number {
    let n = 0;
    for (const o of this.outcomes.values()) if (o.step === step && pred(o.status, o.code)) n += o.latency.count;
    return n;
  }

  /** Reservations granted since the last call, for a worker's live progress report. */
  private fresh: [string, string][] = [];
  takeNewReservations(): [string, string][] {
    const fresh = this.fresh;
    this.fresh = [];
    return fresh;
  }

  /** Everything this recorder saw, as plain data (a worker process sends it to the coordinator). */
  toJSON(): RecorderData {
    return {
      requests: this.requests,
      outcomes: [...this.outcomes.values()].map((o) => ({ ...o, latency: o.latency.toJSON() })),
      timeline: [...this.timeline],
      reservations: [...this.reservations],
      holders: [...this.holders],
      breaches: this.breaches,
      usersArrived: this.usersArrived,
      usersWithTicket: this.usersWithTicket,
      firstSoldOutAt: this.firstSoldOutAt,
      lastReservedAt: this.lastReservedAt,
      lastRequestAt: this.lastRequestAt,
      foundByLookup: this.foundByLookup,
      granted202: this.granted202,
      firstSeenOnRepeat: this.firstSeenOnRepeat,
      holderRepeatsRefused: [...this.holderRepeatsRefused],
    };
  }

  /**
   * Adds a worker's recorder (workers drive disjoint users, so holders never collide). `shiftSeconds`:
   * how many whole seconds after this recorder's start the other one started (a ramp step's).
   */
  merge(d: RecorderData, shiftSeconds = 0): void {
    this.requests += d.requests;
    for (const o of d.outcomes) {
      const key = `${o.step} ${o.status} ${o.code}`;
      const mine = this.outcomes.get(key);
      const latency = LatencyHistogram.fromJSON(o.latency);
      if (mine) mine.latency.merge(latency);
      else this.outcomes.set(key, { step: o.step, status: o.status, code: o.code, latency });
    }
    for (const [stepSecond, counts] of d.timeline) {
      const second = stepSecond + shiftSeconds;
      const bucket = this.timeline.get(second);
      if (!bucket) this.timeline.set(second, { ...counts });
      else for (const k of SERIES) bucket[k] += counts[k];
    }
    for (const [id, user] of d.reservations) this.reservations.set(id, user);
    for (const [user, id] of d.holders) this.holders.set(user, id);
    this.breaches.push(...d.breaches);
    this.usersArrived += d.usersArrived;
    this.usersWithTicket += d.usersWithTicket;
    const min = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
    const max = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));
    this.firstSoldOutAt = min(this.firstSoldOutAt, d.firstSoldOutAt);
    this.lastReservedAt = max(this.lastReservedAt, d.lastReservedAt);
    this.lastRequestAt = Math.max(this.lastRequestAt, d.lastRequestAt);
    this.foundByLookup += d.foundByLookup;
    this.granted202 += d.granted202;
    this.firstSeenOnRepeat += d.firstSeenOnRepeat;
    for (const [code, n] of d.holderRepeatsRefused)
      this.holderRepeatsRefused.set(code, (this.holderRepeatsRefused.get(code) ?? 0) + n);
  }
}

export interface RecorderData {
  requests: number;
  outcomes: { step: Step; status: number; code: string; latency: ReturnType<LatencyHistogram['toJSON']> }[];
  timeline: [number, Record<Series, number>][];
  reservations: [string, string][];
  holders: [string, string][];
  breaches: string[];
  usersArrived: number;
  usersWithTicket: number;
  firstSoldOutAt: number | null;
  lastReservedAt: number | null;
  lastRequestAt: number;
  foundByLookup: number;
  granted202: number;
  firstSeenOnRepeat: number;
  holderRepeatsRefused: [string, number][];
}
