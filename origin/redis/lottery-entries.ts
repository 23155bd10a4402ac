/**
 * The lottery's Redis side (docs/design.md §10): entries on the request path (lua/enter-6.lua, the
 * phase, a user's entry), and for the draw (origin/lottery/draw.ts, patient client) closing the
 * entries, paging through them, the draw's reservations, the winners and the passed-over entrants.
 */
import type { Claims } from '../../contract/eligibility.js';
import { homeBucket } from './buckets.js';
import type { RedisConnection } from './connection.js';
import type { ReservationRequests } from './reservation-requests.js';
import type { Sale } from './sale.js';
import { enterScript, type EnterResult } from './scripts/enter.js';
import { drawReserveScript, type DrawReservation } from './scripts/draw-reserve.js';
import { entryPageScript } from './scripts/entry-page.js';
import type { ReserveOutcome } from './scripts/reserve.js';

/** One lottery entry. */
export interface Entry {
  userId: string;
  quantity: number;
}

/** An entry-list line ("userId:quantity", lua/enter-6.lua) read back. */
export function parseEntry(line: string): Entry {
  const at = line.lastIndexOf(':');
  return { userId: line.slice(0, at), quantity: Number(line.slice(at + 1)) };
}

/** Lottery entries: `open` until the draw closes them, `drawn` once the winners are final. */
export type DrawPhase = 'open' | 'closed' | 'drawn';

/** Users grouped by their home bucket. */
function byHomeBucket(sale: Sale, userIds: Iterable<string>): Map<number, string[]> {
  const byBucket = new Map<number, string[]>();
  for (const u of userIds) {
    const b = homeBucket(u, sale.buckets);
    let list = byBucket.get(b);
    if (!list) byBucket.set(b, (list = []));
    list.push(u);
  }
  return byBucket;
}

export class LotteryEntries {
  constructor(
    private readonly redis: RedisConnection,
    /** A draw on a sale with buckets reserves as a purchase does, borrowing included. */
    private readonly requests: Pick<ReservationRequests, 'reserve'>,
  ) {}

  private get ops() {
    return this.redis.ops.redis;
  }

  // ── Request path: fail-fast client, behind the breaker ─────────────────────────────────────────

  /**
   * lua/enter-6.lua: one lottery entry per user, under the deny list and the eligibility rule, kept
   * with the claims the edge verified (the draw checks eligibility again under the rule in force at
   * the close).
   */
  async enter(input: Sale & { userId: string; quantity: number; claims?: Claims }): Promise<EnterResult> {
    // The entry lives in the user's home bucket, beside that bucket's config (one slot per script).
    const k = this.redis.keys(input, homeBucket(input.userId, input.buckets));
    return this.redis.breaker.run(() => this.redis.request.run(enterScript, k, input));
  }

  /** Where the lottery stands (request path: the FCFS gate after the window, entry polls). */
  async drawPhase(sale: Sale): Promise<DrawPhase> {
    // The draw sets every bucket's flag; bucket 0's is the last one `markDrawn` writes.
    const v = await this.redis.breaker.run(() => this.redis.request.redis.get(this.redis.keys(sale, 0).draw));
    return v === 'closed' || v === 'drawn' ? v : 'open';
  }

  /** The user's entry (quantity) and, once drawn, their winning reservation (request path). */
  async entryOf(sale: Sale, userId: string): Promise<{ quantity: number | null; reservationId: string | null }> {
    const k = this.redis.keys(sale, homeBucket(userId, sale.buckets));
    const client = this.redis.request.redis;
    const [quantity, reservationId] = await this.redis.breaker.run(() =>
      Promise.all([client.hget(k.entrants, userId), client.hget(k.winners, userId)]),
    );
    return { quantity: quantity === null ? null : Number(quantity), reservationId };
  }

  // ── The draw: patient client ────────────────────────────────────────────────────────────────────

  /** No entry after this (lua/enter-6.lua answers CLOSED); keeps `drawn` if already there. */
  async closeEntries(sale: Sale): Promise<void> {
    for (const k of this.redis.allKeys(sale)) await this.ops.set(k.draw, 'closed', 'NX');
  }

  /** The winners are final: FCFS may start, polls answer results. */
  async markDrawn(sale: Sale): Promise<void> {
    for (const k of this.redis.allKeys(sale).reverse()) await this.ops.set(k.draw, 'drawn');
  }

  /** Entries per bucket (the closed list's length in each), bucket 0 first. */
  async entryCounts(sale: Sale): Promise<number[]> {
    return Promise.all(this.redis.allKeys(sale).map((k) => this.ops.llen(k.entryList)));
  }

  /**
   * Entries [start, start + count) of one bucket's list, in entry order, as stored ("userId:quantity",
   * parseEntry reads one), joined by "\n" into one string (lua/entry-page-1.lua): the draw reads a
   * million of them and hashes most without keeping any, so not even a string per entry is made.
   * Pages are addressed by index, so a reader may ask for several at once.
   */
  async entryPage(sale: Sale, bucket: number, start: number, count: number): Promise<string> {
    return this.redis.ops.run(entryPageScript, this.redis.keys(sale, bucket), { start, count });
  }

  /** The claims each user entered with (absent: none forwarded). */
  async entrantClaims(sale: Sale, userIds: string[]): Promise<Map<string, Claims>> {
    const found = new Map<string, Claims>();
    await Promise.all(
      [...byHomeBucket(sale, userIds)].map(async ([b, users]) => {
        const values = await this.ops.hmget(this.redis.keys(sale, b).entrantClaims, ...users);
        values.forEach((v, i) => v !== null && found.set(users[i]!, JSON.parse(v) as Claims));
      }),
    );
    return found;
  }

  /**
   * The reserve decision for a batch of the draw's winners, in draw order: the rule a purchase uses
   * (limit, stock, quantity, deny list); eligibility is the draw's own decision. One bucket: one call
   * of lua/draw-reserve-6.lua on the patient client, which decides them one after the other. Several
   * buckets: the request path's reserve with its borrowing, one at a time.
   */
  async reserveForDraw(sale: Sale, winners: DrawReservation[]): Promise<ReserveOutcome[]> {
    if (sale.buckets === 1)
      return this.redis.ops.run(drawReserveScript, this.redis.keys(sale, 0), {
        activityId: sale.activityId,
        winners,
        now: Date.now(),
      });
    const results: ReserveOutcome[] = [];
    for (const w of winners) results.push(await this.requests.reserve({ ...sale, ...w, eligibilityDecided: true }));
    return results;
  }

  /** Each winner in their home bucket's `winners` hash. */
  async recordWinners(sale: Sale, winners: Map<string, string>): Promise<void> {
    for (const [b, users] of byHomeBucket(sale, winners.keys()))
      await this.ops.hset(this.redis.keys(sale, b).winners, ...users.flatMap((u) => [u, winners.get(u)!]));
  }

  /** Entrants the draw passed over (denied / not eligible), each in their home bucket's set. */
  async recordExcluded(sale: Sale, userIds: string[]): Promise<void> {
    for (const [b, users] of byHomeBucket(sale, userIds))
      await this.ops.sadd(this.redis.keys(sale, b).drawExcluded, ...users);
  }

  /** Every entrant the draw has passed over so far. */
  async excludedEntrants(sale: Sale): Promise<Set<string>> {
    const all = new Set<string>();
    for (const k of this.redis.allKeys(sale)) for (const u of await this.ops.smembers(k.drawExcluded)) all.add(u);
    return all;
  }

  /** userId → reservationId of every winner recorded so far. */
  async winners(sale: Sale): Promise<Map<string, string>> {
    const all = new Map<string, string>();
    for (const k of this.redis.allKeys(sale))
      for (const [userId, reservationId] of Object.entries(await this.ops.hgetall(k.winners)))
        all.set(userId, reservationId);
    return all;
  }
}
