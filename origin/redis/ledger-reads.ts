/**
 * Redis's side of the books, every bucket summed: reconciliation's snapshot (with the units in
 * transit between buckets) and the fingerprints that bracket it, the tranches Redis added, and the
 * reservations each bucket's Stream holds (recover, reconcile). Read on the patient client through
 * the per-bucket SaleLedgerReader.
 */
import type { RedisConnection } from './connection.js';
import {
  SaleLedgerReader,
  unitsInTransit,
  type BucketSnapshot,
  type LedgerSnapshot,
  type StreamReservation,
} from './sale-ledger.js';
import type { Sale } from './sale.js';

export class LedgerReads {
  private readonly ledger: SaleLedgerReader;

  constructor(private readonly redis: RedisConnection) {
    this.ledger = new SaleLedgerReader(redis.ops);
  }

  /** Reconciliation's Redis snapshot, every bucket summed, with the units in transit between buckets. */
  async ledgerSnapshot(sale: Sale): Promise<LedgerSnapshot | null> {
    const parts = await Promise.all(this.redis.allKeys(sale).map((k) => this.ledger.snapshot(k)));
    if (parts.some((p) => p === null)) return null;
    const all = parts as BucketSnapshot[];
    return {
      stock: all.reduce((s, p) => s + p.stock, 0),
      bounds: all.flatMap((p) => p.bounds),
      units: new Map(all.flatMap((p) => [...p.units])),
      open: all.flatMap((p) => p.open),
      released: Object.assign({}, ...all.map((p) => p.released)) as Record<string, string>,
      refilled: Object.assign({}, ...all.map((p) => p.refilled)) as Record<string, string>,
      // A release is split over the buckets: its shares add up.
      tranches: all.reduce((sum, p) => {
        for (const [id, units] of p.tranches) sum.set(id, (sum.get(id) ?? 0) + units);
        return sum;
      }, new Map<string, number>()),
      // Each bucket's lent and borrowing come from its own MULTI; buckets are read one after the
      // other (on a cluster, on different servers), which the re-read of the fingerprints brackets.
      inTransit: sale.buckets > 1 ? unitsInTransit(all) : [],
      fingerprints: all.flatMap((p) => p.fingerprints),
    };
  }

  /** Per bucket, the fingerprint of what its snapshot reads (SaleLedgerReader.fingerprint), read now. */
  async ledgerFingerprints(sale: Sale): Promise<string[]> {
    return Promise.all(this.redis.allKeys(sale).map((k) => this.ledger.fingerprint(k)));
  }

  /** Every bucket's `tranches` hash, shares of one release summed: what Redis added of each release. */
  async tranches(sale: Sale): Promise<Map<string, number>> {
    const hashes = await Promise.all(this.redis.allKeys(sale).map((k) => this.redis.ops.redis.hgetall(k.tranches)));
    const units = new Map<string, number>();
    for (const h of hashes) for (const [id, u] of Object.entries(h)) units.set(id, (units.get(id) ?? 0) + Number(u));
    return units;
  }

  /** Reservation ids appended after the snapshot's bounds (one per bucket; granted after it). */
  async reservationsAfter(sale: Sale, bounds: (string | null)[]): Promise<Set<string>> {
    const later = new Set<string>();
    for (const [b, k] of this.redis.allKeys(sale).entries()) {
      for (const id of await this.ledger.reservationsAfter(k.events, bounds[b] ?? '0-0')) later.add(id);
    }
    return later;
  }

  /** Every reservation of every bucket's Stream and whether it is still open; null when a Stream or group is gone. */
  async streamReservations(sale: Sale): Promise<Map<string, StreamReservation> | null> {
    const merged = new Map<string, StreamReservation>();
    for (const k of this.redis.allKeys(sale)) {
      const part = await this.ledger.reservations(k);
      if (!part) return null;
      for (const [rid, r] of part) merged.set(rid, r);
    }
    return merged;
  }
}
