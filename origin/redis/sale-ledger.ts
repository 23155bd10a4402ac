/**
 * Reads of a sale's Stream as a ledger: the consumer group's position, every reservation with
 * "still open" (pending or not yet delivered), and reconciliation's one-instant snapshot. Used by
 * the RedisStore only; callers get these through it.
 */
import type { RedisClient } from './client.js';
import { CONSUMER_GROUP, type ActivityKeys } from './keys.js';
import { parseEvent, type ReservationEvent } from './reservation-event.js';
import { groupScript, type GroupInfo } from './scripts/group.js';
import type { ScriptRunner } from './scripts/runner.js';
import { compareStreamIds, fieldsOf } from './stream.js';

export type { GroupInfo };

export interface StreamReservation {
  event: ReservationEvent;
  /** Some entry of it is pending or not yet delivered: not settled as far as the group knows. */
  open: boolean;
}

/** Redis at one instant (one MULTI), then the Stream up to the bound read then. */
export interface LedgerSnapshot {
  stock: number;
  /** Per bucket, the Stream's last id at the instant; only entries up to it count as issued. */
  bounds: (string | null)[];
  /** reservationId → units, for entries up to the bound. */
  units: Map<string, number>;
  /** Entries up to the bound still pending, or not delivered at the instant. */
  open: { id: string; reservationId: string; quantity: number }[];
  released: Record<string, string>;
  refilled: Record<string, string>;
  /** Tranche id → units of held-back stock added to the stock (lua/refill-2.lua on `tranches`), summed over buckets. */
  tranches: Map<string, number>;
  /** Units taken from a donor bucket for a borrow that is not confirmed: out of stock, in no Stream. */
  inTransit: InTransit[];
  /** Per bucket, what moves whenever any flow touches it (bucketFingerprint): compared with a re-read. */
  fingerprints: string[];
}

/** One bucket's reading (one MULTI), before buckets are put together. */
export interface BucketSnapshot extends Omit<LedgerSnapshot, 'inTransit'> {
  /** This bucket's `lent` and `borrowing` hashes, read in the same MULTI as its stock. */
  lent: Record<string, string>;
  borrowing: Record<string, string>;
}

export interface InTransit {
  reservationId: string;
  quantity: number;
  donor: number;
  home: number;
  /** The borrow at home: p (pending, maybe in flight), a (given up), or missing. */
  state: string;
}

const PAGE = 1_000;

export class SaleLedgerReader {
  private readonly redis: RedisClient;

  constructor(private readonly scripts: ScriptRunner) {
    this.redis = scripts.redis;
  }

  /**
   * The settlement group of a bucket's Stream; null when the Stream or the group does not exist
   * (lua/group-1.lua, routed with the Stream's key: XINFO sent as a command reaches any node of a
   * cluster). A read that fails throws: taken for "no group", it would tell the cleanup and its
   * checklist that nothing is pending, and drop the sale's backlog series from /metrics.
   */
  groupInfo(k: ActivityKeys): Promise<GroupInfo | null> {
    return this.scripts.run(groupScript, k, undefined);
  }

  /** Entries from `start` to `end`, page by page. */
  private async *entries(events: string, start: string, end: string): AsyncGenerator<[string, string[]]> {
    for (;;) {
      const page = (await this.redis.xrange(events, start, end, 'COUNT', PAGE)) as [string, string[]][];
      yield* page;
      if (page.length < PAGE) return;
      start = `(${page[page.length - 1]![0]}`;
    }
  }

  private async pendingIds(events: string, end: string, count: number): Promise<Set<string>> {
    const ids = new Set<string>();
    if (count <= 0) return ids;
    const rows = (await this.redis.xpending(events, CONSUMER_GROUP, '-', end, count)) as [string][];
    for (const [id] of rows) ids.add(id);
    return ids;
  }

  async reservations(k: ActivityKeys): Promise<Map<string, StreamReservation> | null> {
    const events = k.events;
    const info = await this.groupInfo(k);
    if (!info) return null;
    const pending = await this.pendingIds(events, '+', info.pending);
    const reservations = new Map<string, StreamReservation>();
    for await (const [id, fields] of this.entries(events, '-', '+')) {
      const event = parseEvent(id, fields);
      if (!event) continue;
      const open = pending.has(id) || compareStreamIds(id, info.lastDeliveredId) > 0;
      const seen = reservations.get(event.reservationId);
      reservations.set(event.reservationId, { event, open: open || (seen?.open ?? false) });
    }
    return reservations;
  }

  /**
   * One bucket at one instant: every figure reconciliation takes from this bucket, `lent` and
   * `borrowing` included, in one MULTI (a script moves units and records them in one step, so only
   * a reading of both in one step sees them agree). Then the Stream up to the bound read then, and
   * its pending entries (an entry pending up to the bound now was pending at the instant).
   */
  async snapshot(keys: ActivityKeys): Promise<BucketSnapshot | null> {
    const { stock, bound, group, hashes } = await this.readBucket(keys, 'hgetall');
    const [released, refilled, tranches, lent, borrowing] = hashes as (Record<string, string> | null)[];
    if (stock === null) return null;

    const units = new Map<string, number>();
    const entries: { id: string; reservationId: string; quantity: number }[] = [];
    if (bound) {
      for await (const [id, fields] of this.entries(keys.events, '-', bound)) {
        const f = fieldsOf(fields);
        const quantity = Number(f.quantity) || 0;
        if (f.reservationId) units.set(f.reservationId, quantity);
        entries.push({ id, reservationId: f.reservationId ?? '', quantity });
      }
    }
    const lastDelivered = group?.['last-delivered-id'] ?? '0-0';
    const pending = group && bound ? await this.pendingIds(keys.events, bound, Number(group.pending)) : new Set();
    return {
      stock: Number(stock),
      bounds: [bound],
      units,
      open: entries.filter((e) => pending.has(e.id) || compareStreamIds(e.id, lastDelivered) > 0),
      released: (released as Record<string, string> | null) ?? {},
      refilled: (refilled as Record<string, string> | null) ?? {},
      tranches: new Map(
        Object.entries((tranches as Record<string, string> | null) ?? {}).map(([id, u]) => [id, Number(u)]),
      ),
      lent: (lent as Record<string, string> | null) ?? {},
      borrowing: (borrowing as Record<string, string> | null) ?? {},
      fingerprints: [
        fingerprintParts(
          stock,
          bound,
          group,
          hashes.map((h) => Object.keys((h as Record<string, string> | null) ?? {}).length),
        ),
      ],
    };
  }

  async reservationsAfter(events: string, bound: string): Promise<Set<string>> {
    const later = new Set<string>();
    for await (const [, fields] of this.entries(events, `(${bound}`, '+'))
      later.add(fieldsOf(fields).reservationId ?? '');
    return later;
  }

  /**
   * What a bucket's snapshot would show moved, read cheaply (one MULTI, no hash bodies): every flow
   * changes at least one of these — a reservation the Stream's last id and the stock, settlement the
   * group, a refill, release, tranche or borrow the stock and the size of the hash it records in (a
   * borrow's confirm appends to the home Stream). Equal before and after the MySQL read: Redis did
   * not move in between.
   */
  async fingerprint(keys: ActivityKeys): Promise<string> {
    const { stock, bound, group, hashes } = await this.readBucket(keys, 'hlen');
    return fingerprintParts(stock, bound, group, hashes.map(Number));
  }

  /**
   * One MULTI over a bucket: its stock, the Stream's last id, the settlement group, and each of the
   * hashes a flow records in (released, refilled, tranches, lent, borrowing, in that order) read
   * whole (`hgetall`) or by size only (`hlen`). A failed read is null.
   */
  private async readBucket(
    keys: ActivityKeys,
    read: 'hgetall' | 'hlen',
  ): Promise<{
    stock: string | null;
    bound: string | null;
    group: Record<string, string> | undefined;
    hashes: unknown[];
  }> {
    const multi = this.redis
      .multi()
      .get(keys.stock)
      .xrevrange(keys.events, '+', '-', 'COUNT', 1)
      .xinfo('GROUPS', keys.events);
    for (const hash of [keys.released, keys.refilled, keys.tranches, keys.lent, keys.borrowing]) multi[read](hash);
    const replies = (await multi.exec())!;
    const [stock, last, groups, ...hashes] = replies.map(([err, value]) => (err ? null : value));
    return {
      stock: stock as string | null,
      bound: (last as [string, string[]][] | null)?.[0]?.[0] ?? null,
      group: ((groups as unknown[][] | null) ?? []).map(fieldsOf).find((g) => g.name === CONSUMER_GROUP),
      hashes,
    };
  }
}

function fingerprintParts(
  stock: string | null,
  last: string | null,
  group: Record<string, string> | undefined,
  sizes: number[],
): string {
  return [stock, last, group?.['last-delivered-id'] ?? '', group?.pending ?? '', ...sizes].join('/');
}

/**
 * Lent entries of every bucket whose borrow is not confirmed at its home bucket, from the buckets'
 * snapshots (`lent` and `borrowing` of bucket b, in b's order).
 */
export function unitsInTransit(
  buckets: { lent: Record<string, string>; borrowing: Record<string, string> }[],
): InTransit[] {
  const lent = buckets.map((b) => b.lent);
  const borrowing = buckets.map((b) => b.borrowing);
  const out: InTransit[] = [];
  for (const [donor, entries] of lent.entries()) {
    for (const [reservationId, value] of Object.entries(entries)) {
      const [quantity, home] = value.split('|').map(Number);
      const state = borrowing[home!]?.[reservationId] ?? '';
      if (state.startsWith('c')) continue;
      out.push({ reservationId, quantity: quantity!, donor, home: home!, state: state.slice(0, 1) || 'missing' });
    }
  }
  return out;
}
