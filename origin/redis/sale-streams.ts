/**
 * A sale's bucket Streams as settlement and operators use them: the consumer groups' backlog, one
 * consumer per bucket Stream (settlement), and an admin's retry of a dead-lettered reservation
 * (lua/requeue-5.lua appends it to its home bucket's Stream again).
 */
import { homeBucket } from './buckets.js';
import type { RedisConnection } from './connection.js';
import { SaleEventReader } from './event-reader.js';
import type { ReservationEvent } from './reservation-event.js';
import { SaleLedgerReader } from './sale-ledger.js';
import type { Sale } from './sale.js';
import { requeueScript, type RequeueResult } from './scripts/requeue.js';

export class SaleStreams {
  private readonly ledger: SaleLedgerReader;

  constructor(private readonly redis: RedisConnection) {
    this.ledger = new SaleLedgerReader(redis.ops);
  }

  /** The consumer groups of every bucket, summed. */
  async groupInfo(sale: Sale): Promise<{ pending: number; lag: number } | null> {
    const infos = await Promise.all(this.redis.allKeys(sale).map((k) => this.ledger.groupInfo(k)));
    if (infos.every((i) => i === null)) return null;
    return infos.reduce((s, i) => ({ pending: s.pending + (i?.pending ?? 0), lag: s.lag + (i?.lag ?? 0) }), {
      pending: 0,
      lag: 0,
    });
  }

  /** One consumer per bucket Stream, each on a connection of its own (XREADGROUP BLOCK holds it). */
  openEventReaders(sale: Sale, consumer: string, blockMs: number): SaleEventReader[] {
    return this.redis.allKeys(sale).map((k) => {
      const client = this.redis.open('origin-settle', {
        commandTimeoutMs: blockMs + 5_000,
        queueWhileOffline: true,
        logAs: 'settlement redis error',
        tracked: false,
      });
      const reader: SaleEventReader = new SaleEventReader(client, k.events, consumer, () => this.redis.untrack(reader));
      this.redis.track(reader);
      return reader;
    });
  }

  /** lua/requeue-5.lua on the user's home bucket: an admin's retry of a dead-lettered reservation. */
  async requeue(sale: Sale, e: ReservationEvent): Promise<RequeueResult> {
    const k = this.redis.keys(sale, homeBucket(e.userId, sale.buckets));
    return this.redis.ops.run(requeueScript, k, { ...e, now: Date.now() });
  }
}
