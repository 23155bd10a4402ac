/**
 * The request path of a purchase: the reserve decision (lua/reserve-6.lua on the user's home
 * bucket, borrow.ts when it cannot serve), the sold-out path's holder lookup, and with
 * REDIS_WAIT_REPLICAS the `WAIT` that must see a reservation before it is promised. Everything here
 * runs on the fail-fast request client behind the circuit breaker.
 */
import { Cluster } from 'ioredis';
import { newReservationId } from '../../contract/ids.js';
import { borrow } from './borrow.js';
import { homeBucket } from './buckets.js';
import type { RedisConnection } from './connection.js';
import type { ActivityKeys } from './keys.js';
import type { Sale } from './sale.js';
import {
  reserveScript,
  type ReserveArgs,
  type ReserveInput,
  type ReserveReply,
  type ReserveOutcome,
} from './scripts/reserve.js';
import { WaitGroups, type WaitedReply } from './wait-groups.js';

export interface ReservationRequestOptions {
  /** How long a request waits for the same user's borrow in flight (BORROW_WAIT_MS). */
  borrowWaitMs?: number;
  /** Test seam for the crash test only: runs between a borrow's take and its confirm. */
  afterBorrowTake?: () => Promise<void>;
  /** REDIS_WAIT_REPLICAS / REDIS_WAIT_TIMEOUT_MS: replicas that must hold a reservation before it is promised. */
  wait?: { replicas: number; timeoutMs: number };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The holder value of a borrow in flight ("~rid"): not a reservation yet. */
const PENDING_MARK = '~';
/** Config-hash field written only so that a following `WAIT` covers every earlier write on that primary. */
const WAIT_MARK_FIELD = 'waitMark';

export class ReservationRequests {
  /** With REDIS_WAIT_REPLICAS: the reservations that go out together behind one `WAIT` (wait-groups.ts). */
  private readonly waitGroups: WaitGroups | null;

  constructor(
    private readonly redis: RedisConnection,
    private readonly opts: ReservationRequestOptions = {},
  ) {
    const wait = opts.wait;
    this.waitGroups = wait?.replicas
      ? new WaitGroups({
          scripts: redis.request,
          wait,
          retryAlone: async (k, args, err) => {
            if (!err.message.includes('NOSCRIPT') && !(await this.followedRedirect(err))) throw err;
            return this.reserveAndWaitAlone(k, args, wait);
          },
        })
      : null;
  }

  private get client() {
    return this.redis.request.redis;
  }

  /**
   * The one atomic decision, on the user's home bucket (lua/reserve-6.lua). When that bucket cannot
   * serve and the sale has other buckets, the user is marked pending there and borrow.ts takes the
   * units from at most two other buckets, then confirms at home.
   */
  async reserve(input: ReserveInput): Promise<ReserveOutcome> {
    const deadline = Date.now() + (this.opts.borrowWaitMs ?? 500);
    for (;;) {
      const result = await this.reserveOnce(input);
      if (result !== 'pending') return result;
      // The same user's borrow is in flight (a concurrent click): wait for its outcome.
      if (Date.now() >= deadline) return { kind: 'busy' };
      await sleep(10);
    }
  }

  private async reserveOnce(input: ReserveInput): Promise<ReserveOutcome | 'pending'> {
    const home = homeBucket(input.userId, input.buckets);
    const k = this.redis.keys(input, home);
    const args: ReserveArgs = {
      userId: input.userId,
      quantity: input.quantity,
      reservationId: newReservationId(input.activityId),
      requestId: input.requestId,
      traceId: input.traceId,
      now: Date.now(),
      mayBorrow: input.buckets > 1,
      claims: input.claims,
      checkEligibility: !input.eligibilityDecided,
    };
    const wait = this.opts.wait;
    let decoded: ReserveReply;
    let replicas = 0;
    if (this.waitGroups) {
      const groups = this.waitGroups;
      ({ decoded, replicas } = await this.redis.breaker.run(() => groups.reserve(k, args)));
    }
    // Without WAIT, the script's reply alone: no promise and object around it per reserve.
    else decoded = await this.redis.breaker.run(() => this.redis.request.run(reserveScript, k, args));
    switch (decoded.kind) {
      case 'reserved': {
        if (replicas < (wait?.replicas ?? 0)) return { kind: 'unconfirmed', reservationId: decoded.reservationId };
        // With buckets, this bucket being empty says nothing of the others.
        if (decoded.remaining !== 0 || input.buckets <= 1) return decoded;
        return { kind: 'reserved', reservationId: decoded.reservationId, remaining: await this.requestStock(input) };
      }
      case 'repeat':
        return this.confirmed(input, home, decoded);
      case 'pending':
        return 'pending';
      case 'borrow': {
        const result = await borrow(this.borrowDeps(), input, home, decoded.reservationId, decoded.homeStock);
        if (result.kind !== 'reserved') return result;
        const { donor, ...reserved } = result;
        return this.confirmed(input, home, reserved, donor);
      }
      default:
        return decoded;
    }
  }

  /**
   * The retry of a group's member whose script failed (wait-groups.ts): the reservation on its own,
   * the script loaded first (a promoted replica or a restarted primary lost the script cache) and
   * `WAIT` behind it in one pipeline on the primary that owns the bucket's slot, so WAIT covers this
   * very write. Two tries after the group's, as a redirect may need one more.
   */
  private async reserveAndWaitAlone(
    k: ActivityKeys,
    args: ReserveArgs,
    wait: { replicas: number; timeoutMs: number },
  ): Promise<WaitedReply> {
    for (let attempt = 1; ; attempt++) {
      const pipeline = this.client.pipeline();
      this.redis.request.queue(pipeline, reserveScript, k, args, { loadFirst: true });
      pipeline.call('WAIT', wait.replicas, wait.timeoutMs);
      const results = (await pipeline.exec()) ?? [];
      const [[scriptErr, reply], [waitErr, replicas]] = results.slice(-2) as [
        [Error | null, unknown],
        [Error | null, unknown],
      ];
      if (scriptErr) {
        if (attempt < 2 && scriptErr.message.includes('NOSCRIPT')) continue;
        if (attempt < 2 && (await this.followedRedirect(scriptErr))) continue;
        throw scriptErr;
      }
      if (waitErr) throw waitErr;
      return { decoded: reserveScript.decode(reply as (string | number)[]), replicas: Number(replicas) };
    }
  }

  /**
   * A result that promises a reservation written earlier (a repeat, a borrow's confirm): with
   * REDIS_WAIT_REPLICAS, a marker write on the bucket's primary and `WAIT` behind it in one pipeline
   * make WAIT cover every earlier write there, the reservation's included. A borrowed reservation was
   * written on two buckets — its units taken at the donor, the reservation confirmed at home — which
   * on a cluster may live on two masters: both must confirm, or a failover of the donor's master
   * could give the units back to sale while the reservation stands. The donor is the borrow's (or,
   * on a repeat, the one its home bucket recorded: borrowing[rid] = "c|donor").
   */
  private async confirmed(
    sale: Sale,
    home: number,
    result: ReserveOutcome & { reservationId: string },
    donor?: number,
  ): Promise<ReserveOutcome> {
    const wait = this.opts.wait;
    if (!wait?.replicas) return result;
    const buckets = [home];
    // One server holds every bucket: one marker on it covers both writes.
    if (sale.buckets > 1 && this.client instanceof Cluster) {
      donor ??= await this.recordedDonor(sale, home, result.reservationId);
      if (donor !== undefined && donor !== home) buckets.push(donor);
    }
    const counts = await this.redis.breaker.run(() =>
      Promise.all(buckets.map((b) => this.markAndWait(this.redis.keys(sale, b), wait))),
    );
    return counts.every((n) => n >= wait.replicas)
      ? result
      : { kind: 'unconfirmed', reservationId: result.reservationId };
  }

  /** Marker write + WAIT on the primary of the bucket's slot: how many replicas acknowledged everything before it. */
  private async markAndWait(k: ActivityKeys, wait: { replicas: number; timeoutMs: number }): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      const results =
        (await this.client
          .pipeline()
          .hset(k.config, WAIT_MARK_FIELD, Date.now())
          .call('WAIT', wait.replicas, wait.timeoutMs)
          .exec()) ?? [];
      const [[markErr], [waitErr, count]] = results as [[Error | null, unknown], [Error | null, unknown]];
      if (markErr && attempt < 2 && (await this.followedRedirect(markErr))) continue;
      if (markErr || waitErr) throw (markErr ?? waitErr)!;
      return Number(count);
    }
  }

  /** The donor a confirmed borrow took its units from, as its home bucket recorded it; undefined when not borrowed. */
  private async recordedDonor(sale: Sale, home: number, reservationId: string): Promise<number | undefined> {
    const state = await this.redis.breaker.run(() =>
      this.client.hget(this.redis.keys(sale, home).borrowing, reservationId),
    );
    return state?.startsWith('c|') ? Number(state.slice(2)) : undefined;
  }

  /**
   * A pipeline bound for the wrong cluster node (its slot moved in a failover) comes back with MOVED
   * on the script and an error on WAIT, which ioredis does not retry by itself: refresh the slot map
   * and tell the caller to send it again. False for any other error.
   */
  private async followedRedirect(err: Error): Promise<boolean> {
    if (!(this.client instanceof Cluster) || !/^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/.test(err.message)) return false;
    const cluster = this.client;
    await new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve()));
    return true;
  }

  private borrowDeps() {
    return {
      run: <T>(work: () => Promise<T>) => this.redis.breaker.run(work),
      scripts: this.redis.request,
      keys: (sale: Sale, b: number) => this.redis.keys(sale, b),
      log: this.redis.log,
      afterTake: this.opts.afterBorrowTake,
    };
  }

  /** Units left over all buckets, on the request client. */
  private async requestStock(sale: Sale): Promise<number> {
    const values = await this.redis.breaker.run(() =>
      Promise.all(this.redis.allKeys(sale).map((k) => this.client.get(k.stock))),
    );
    return values.reduce((s, v) => s + Number(v ?? 0), 0);
  }

  /** The user's reservation in this sale, if Redis holds one (request path). A borrow in flight is not one yet. */
  async holderOf(sale: Sale, userId: string): Promise<string | null> {
    const held = await this.redis.breaker.run(() =>
      this.client.hget(this.redis.keys(sale, homeBucket(userId, sale.buckets)).holders, userId),
    );
    return held && !held.startsWith(PENDING_MARK) ? held : null;
  }

  /**
   * The sold-out path (the flag skips the script, never the holder lookup): the user's reservation as
   * a repeat, else sold out. A borrow of this user still in flight is waited for, as in reserve.
   */
  async repeatOf(sale: Sale, userId: string): Promise<ReserveOutcome> {
    const deadline = Date.now() + (this.opts.borrowWaitMs ?? 500);
    const home = homeBucket(userId, sale.buckets);
    const holders = this.redis.keys(sale, home).holders;
    for (;;) {
      const held = await this.redis.breaker.run(() => this.client.hget(holders, userId));
      if (!held) return { kind: 'sold_out' };
      if (!held.startsWith(PENDING_MARK)) return this.confirmed(sale, home, { kind: 'repeat', reservationId: held });
      if (Date.now() >= deadline) return { kind: 'busy' };
      await sleep(10);
    }
  }

  /** Health: one PING on the request client (no breaker: health must see Redis itself). */
  async ping(): Promise<void> {
    await this.client.ping();
  }
}
