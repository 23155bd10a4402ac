/**
 * One consumer's view of a sale's Stream (consumer group CONSUMER_GROUP): new entries, entries
 * reclaimed from idle consumers with their delivery counts, acknowledgements. Entries come decoded;
 * `event` is null for an entry that is not a reservation event.
 */
import type { RedisClient } from './client.js';
import { CONSUMER_GROUP } from './keys.js';
import { parseEvent, type ReservationEvent } from './reservation-event.js';

export interface StreamEntry {
  id: string;
  event: ReservationEvent | null;
}

type RawEntry = [id: string, fields: string[]];
const decode = ([id, fields]: RawEntry): StreamEntry => ({ id, event: parseEvent(id, fields) });

export class SaleEventReader {
  constructor(
    private readonly redis: RedisClient,
    private readonly events: string,
    readonly consumer: string,
    private readonly onClose: () => void = () => {},
  ) {}

  /** New entries for this consumer, waiting up to `blockMs`. */
  async read(count: number, blockMs: number): Promise<StreamEntry[]> {
    const reply = (await this.redis.xreadgroup(
      'GROUP',
      CONSUMER_GROUP,
      this.consumer,
      'COUNT',
      count,
      'BLOCK',
      blockMs,
      'STREAMS',
      this.events,
      '>',
    )) as [string, RawEntry[]][] | null;
    return (reply?.[0]?.[1] ?? []).map(decode);
  }

  /**
   * One XAUTOCLAIM page from `cursor`: entries idle past `idleMs` now belong to this consumer, each
   * with its delivery count. Entries deleted from the Stream are acknowledged on the way.
   */
  async reclaim(
    idleMs: number,
    cursor: string,
    count: number,
  ): Promise<{ next: string; entries: StreamEntry[]; deliveries: Map<string, number> }> {
    const [next, raw, deleted] = (await this.redis.xautoclaim(
      this.events,
      CONSUMER_GROUP,
      this.consumer,
      idleMs,
      cursor,
      'COUNT',
      count,
    )) as [string, (RawEntry | null)[], string[]?];
    if (deleted?.length) await this.ack(deleted);
    const live = raw.filter((e): e is RawEntry => Array.isArray(e) && Array.isArray(e[1]));
    const deliveries = new Map<string, number>();
    if (live.length > 0) {
      const pipeline = this.redis.pipeline();
      for (const [id] of live) pipeline.xpending(this.events, CONSUMER_GROUP, id, id, 1);
      for (const [i, result] of ((await pipeline.exec()) ?? []).entries()) {
        const row = (result[1] as [string, string, number, number][])[0];
        deliveries.set(live[i]![0], row ? Number(row[3]) : 1);
      }
    }
    return { next, entries: live.map(decode), deliveries };
  }

  async ack(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.redis.xack(this.events, CONSUMER_GROUP, ...ids);
  }

  async close(): Promise<void> {
    this.onClose();
    await this.redis.quit().catch(() => undefined);
  }
}
