/**
 * The stock store: the one way the origin touches Redis. It owns every key (keys.ts), runs each Lua
 * script as a typed method with a decoded result (no caller lays out KEYS or reads `reply[0]`), and
 * keeps the request path on its own fail-fast client behind the circuit breaker. Admin, jobs and
 * settlement use a patient client that queues while reconnecting.
 *
 * A sale's stock may be split into buckets (docs/design.md §10), each on its own hash tag; callers never see
 * them: a user's decision runs on the user's home bucket (borrow.ts when it cannot serve), and every
 * operator figure is summed over the buckets here.
 */
import type { ActivitySwitch } from '../../contract/activity.js';
import type { Claims } from '../../contract/eligibility.js';
import { newReservationId } from '../../contract/ids.js';
import type { Logger } from '../logger.js';
import { borrow, returnStranded, type StrandedBorrow } from './borrow.js';
import { homeBucket, refillBucket, splitStock } from './buckets.js';
import {
  CircuitBreaker,
  createRedis,
  redisReady,
  type BreakerOptions,
  type RedisClient,
  type RedisTarget,
} from './client.js';
import { SaleEventReader } from './event-reader.js';
import { reserveDrawBatch, type DrawReservation } from './draw-reservations.js';
import { CONSUMER_GROUP, keyspace, type ActivityKeys, type Keyspace } from './keys.js';
import { Cluster } from 'ioredis';
import { NodeStatsReader, type RedisNodeStats } from './node-stats.js';
import type { ReservationEvent } from './reservation-event.js';
import {
  SaleLedgerReader,
  unitsInTransit,
  type BucketSnapshot,
  type LedgerSnapshot,
  type StreamReservation,
} from './sale-ledger.js';
import {
  EnterCode,
  RecoverCode,
  RefillCode,
  ReleaseCode,
  RequeueCode,
  ReserveCode,
  WarmupCode,
  defineScripts,
  readScripts,
  type LuaScript,
  type ScriptCommands,
} from './scripts.js';

/** One activity's SKU and how many stock buckets it has (1 = the single-key layout). */
export interface Sale {
  activityId: string;
  skuId: string;
  buckets: number;
}

export interface ReserveInput extends Sale {
  userId: string;
  quantity: number;
  requestId: string;
  traceId: string;
  /** The user's JWT claims the edge verified; the script checks the sale's eligibility rule against them. */
  claims?: Claims;
  /**
   * The lottery draw decides eligibility itself (the claims stored with each entry, under the rule in
   * force at the close): the script skips the rule.
   */
  eligibilityDecided?: boolean;
}

/** A deny-list row as the scripts get it: who, denied or allowed again, and the row's revision (≥ 1). */
export interface DenyRevision {
  userId: string;
  denied: boolean;
  revision: number;
}

export type ReserveResult =
  | { kind: 'reserved'; reservationId: string; remaining: number }
  | { kind: 'repeat'; reservationId: string }
  | { kind: 'sold_out' }
  | { kind: 'insufficient_stock' }
  | { kind: 'limit_exceeded' }
  | { kind: 'paused' }
  | { kind: 'ended' }
  | { kind: 'not_warmed' }
  /** The user is on the deny list (the bucket's `denied` hash). */
  | { kind: 'denied' }
  /** The claims do not meet the sale's eligibility rule (the config hash's `eligibility`). */
  | { kind: 'not_eligible' }
  /** The user's own borrow from another bucket is still in flight (or units moved under it): try again. */
  | { kind: 'busy' }
  /**
   * Granted on the primary, but `WAIT` did not see it on REDIS_WAIT_REPLICAS replicas in time: a
   * failover now could lose it, so it is not promised. The holder lookup tells later what became of it.
   */
  | { kind: 'unconfirmed'; reservationId: string };

export type WarmupResult =
  | { kind: 'loaded'; stock: number; holders: number }
  | { kind: 'already'; stock: number; holders: number }
  | { kind: 'has_history' };
export type ReleaseResult =
  { kind: 'released'; restocked: number } | { kind: 'already'; restocked: number } | { kind: 'not_warmed' };
export type RefillResult =
  { kind: 'refilled'; stock: number } | { kind: 'already'; stock: number } | { kind: 'not_warmed' };
export type RequeueResult =
  | { kind: 'requeued'; stock: number }
  | { kind: 'already' }
  | { kind: 'not_warmed' }
  | { kind: 'not_released' }
  | { kind: 'holds_other' }
  | { kind: 'sold_out' }
  | { kind: 'denied' };
export type RecoverResult =
  { kind: 'recovered'; stock: number; holders: number } | { kind: 'warm' } | { kind: 'no_stream' };

export type EnterResult =
  | { kind: 'entered'; entrants: number }
  | { kind: 'repeat'; quantity: number }
  | { kind: 'limit_exceeded' }
  | { kind: 'closed' }
  | { kind: 'paused' }
  | { kind: 'ended' }
  | { kind: 'not_warmed' }
  | { kind: 'denied' }
  | { kind: 'not_eligible' };

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

export interface RecoverInput {
  stock: number;
  state: ActivitySwitch;
  maxPerUser: number;
  /** userId → reservationId */
  holders: Map<string, string>;
  /** reservationId → units given back, and whose reservation it was */
  released: Map<string, { units: number; userId: string }>;
  /** reservationId → units refilled */
  refilled: Map<string, number>;
  /** Tranche id → units of the releases the stock holds (MySQL applied them); split over the buckets as releaseTranche does. */
  tranches: Map<string, number>;
  /** Reservations MySQL proves (orders) that the surviving Stream lacks: appended again (failover). */
  restore?: Omit<ReservationEvent, 'streamId'>[];
}

/** A bucket's primary and its replicas as INFO replication lists them. */
export interface PrimaryReplication {
  runId: string;
  /** `host:port` of the primary. */
  node: string;
  replicas: { state: string; lag: number }[];
}

/** `slaveN:ip=…,port=…,state=online,offset=…,lag=…` lines of INFO replication. */
export function replicasOf(info: string): PrimaryReplication['replicas'] {
  const out: PrimaryReplication['replicas'] = [];
  for (const line of info.split(/\r?\n/)) {
    if (!/^slave\d+:/.test(line)) continue;
    const fields = Object.fromEntries(
      line
        .slice(line.indexOf(':') + 1)
        .split(',')
        .map((kv) => kv.split('=') as [string, string]),
    );
    out.push({ state: fields.state ?? '', lag: Number(fields.lag ?? Infinity) });
  }
  return out;
}

export interface StockStoreOptions {
  redis: RedisTarget;
  /** Request path command timeout (REDIS_COMMAND_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** Admin, jobs, settlement side work (REDIS_OPS_TIMEOUT_MS). */
  opsTimeoutMs: number;
  breaker: BreakerOptions;
  log: Logger;
  /** How long a request waits for the same user's borrow in flight (BORROW_WAIT_MS). */
  borrowWaitMs?: number;
  /** Test seam for the crash test only: runs between a borrow's take and its confirm. */
  afterBorrowTake?: () => Promise<void>;
  /** REDIS_KEY_PREFIX: put in front of every key, the registry and the pub/sub channel (default none). */
  keyPrefix?: string;
  /** REDIS_WAIT_REPLICAS / REDIS_WAIT_TIMEOUT_MS: replicas that must hold a reservation before it is promised. */
  wait?: { replicas: number; timeoutMs: number };
}

const num = (v: string | number | undefined) => Number(v ?? 0);
/** The claims as the scripts read them (ARGV): JSON, `{}` when the user's JWT carried none. */
const claimsArg = (claims: Claims | undefined) => (claims ? JSON.stringify(claims) : '{}');
/** Config-hash field: the sale's eligibility rule as JSON, "" = everyone (lua/includes/access-rules.lua). */
const ELIGIBILITY_FIELD = 'eligibility';
/** Deny-list rows per lua/deny-1.lua call. */
const DENY_BATCH = 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PENDING_MARK = '~';
/** Config-hash field: the primary (per bucket) whose state a failover recovery proved. */
const PROVEN_FIELD = 'provenPrimary';
/** Config-hash field (bucket 0): who let the sale open although one failover would stall a bucket. */
const REPLICA_RISK_FIELD = 'replicaRiskAcceptedBy';
/** Config-hash field (bucket 0): set when warm-up paused the sale for the replica rule (not an operator's pause). */
const REPLICA_PAUSE_FIELD = 'replicaPaused';
/** Config-hash field written only so that a following `WAIT` covers every earlier write on that primary. */
const WAIT_MARK_FIELD = 'waitMark';
type Reply = (string | number)[];

export class StockStore {
  private readonly breaker: CircuitBreaker;
  private readonly ledger: SaleLedgerReader;
  private readonly readers = new Set<SaleEventReader>();
  private subscriber: RedisClient | null = null;
  private nodeStatsReader: NodeStatsReader | null = null;
  private readonly space: Keyspace;
  /**
   * The failover watch's own connection (primaries, replication), opened on first use. Not the
   * request connection: a `WAIT` blocks its connection for up to REDIS_WAIT_TIMEOUT_MS, so on a
   * primary with too few replicas every reservation's WAIT queues ahead of the watch's question
   * until it times out — the watch then read "cannot tell" for the very bucket that failed over.
   */
  private watch: { redis: RedisClient; scripts: ScriptCommands } | null = null;

  private constructor(
    private readonly opts: StockStoreOptions,
    private readonly requestRedis: RedisClient,
    private readonly requestScripts: ScriptCommands,
    private readonly redis: RedisClient,
    private readonly scripts: ScriptCommands,
    private readonly lua: Map<string, LuaScript>,
  ) {
    this.breaker = new CircuitBreaker(opts.breaker);
    this.ledger = new SaleLedgerReader(redis);
    this.space = keyspace(opts.keyPrefix);
  }

  static async connect(opts: StockStoreOptions): Promise<StockStore> {
    const requestRedis = createRedis(opts.redis, {
      commandTimeoutMs: opts.requestTimeoutMs,
      queueWhileOffline: false,
      name: 'origin-request',
    });
    const redis = createRedis(opts.redis, {
      commandTimeoutMs: opts.opsTimeoutMs,
      queueWhileOffline: true,
      name: 'origin-ops',
    });
    requestRedis.on('error', (err) => opts.log.debug({ err: err.message }, 'redis error'));
    redis.on('error', (err) => opts.log.debug({ err: err.message }, 'redis ops error'));
    const lua = readScripts();
    const store = new StockStore(
      opts,
      requestRedis,
      defineScripts(requestRedis, lua),
      redis,
      defineScripts(redis, lua),
      lua,
    );
    try {
      await Promise.all([redisReady(requestRedis), redisReady(redis)]);
    } catch (err) {
      requestRedis.disconnect();
      redis.disconnect();
      throw err;
    }
    return store;
  }

  /** The keys of one bucket of the sale. */
  keys(sale: Sale, bucket = 0): ActivityKeys {
    return this.space.activity(sale.activityId, sale.skuId, bucket, sale.buckets);
  }

  private allKeys(sale: Sale): ActivityKeys[] {
    return Array.from({ length: sale.buckets }, (_, b) => this.keys(sale, b));
  }

  // ── Request path: short timeout, no offline queue, behind the breaker ──────────────────────────

  /**
   * The one atomic decision, on the user's home bucket (lua/reserve-6.lua). When that bucket cannot
   * serve and the sale has other buckets, the user is marked pending there and borrow.ts takes the
   * units from at most two other buckets, then confirms at home.
   */
  async reserve(input: ReserveInput): Promise<ReserveResult> {
    const deadline = Date.now() + (this.opts.borrowWaitMs ?? 500);
    for (;;) {
      const result = await this.reserveOnce(input);
      if (result !== 'pending') return result;
      // The same user's borrow is in flight (a concurrent click): wait for its outcome.
      if (Date.now() >= deadline) return { kind: 'busy' };
      await sleep(10);
    }
  }

  private async reserveOnce(input: ReserveInput): Promise<ReserveResult | 'pending'> {
    const home = homeBucket(input.userId, input.buckets);
    const k = this.keys(input, home);
    const keys = [k.stock, k.holders, k.events, k.config, k.borrowing, k.denied];
    const args = [
      input.userId,
      input.quantity,
      newReservationId(input.activityId),
      input.requestId,
      input.traceId,
      Date.now(),
      input.buckets > 1 ? 1 : 0,
      claimsArg(input.claims),
      input.eligibilityDecided ? 0 : 1,
    ];
    const { reply, replicas } = await this.breaker.run(() =>
      this.opts.wait?.replicas
        ? this.reserveAndWait(keys, args, this.opts.wait)
        : this.requestScripts.reserve(keys, args).then((r) => ({ reply: r, replicas: 0 })),
    );
    const decoded = decodeReserve(reply);
    switch (decoded.kind) {
      case 'reserved': {
        if (replicas < (this.opts.wait?.replicas ?? 0))
          return { kind: 'unconfirmed', reservationId: decoded.reservationId };
        // With buckets, this bucket being empty says nothing of the others.
        const left = decoded.remaining === 0 && input.buckets > 1 ? await this.requestStock(input) : decoded.remaining;
        return { ...decoded, remaining: left };
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
   * The reserve script and `WAIT` in one pipeline on the primary that owns the bucket's slot: one
   * connection, nothing of ours in between, so WAIT covers this very write. A primary that lost the
   * script cache (a promoted replica, a restart) gets it loaded in the same pipeline on the retry.
   */
  private async reserveAndWait(
    keys: string[],
    args: (string | number)[],
    wait: { replicas: number; timeoutMs: number },
  ): Promise<{ reply: Reply; replicas: number }> {
    const script = this.lua.get('reserve')!;
    for (let attempt = 0; ; attempt++) {
      const pipeline = this.requestRedis.pipeline();
      if (attempt > 0) pipeline.script('LOAD', script.source);
      pipeline.evalsha(script.sha, keys.length, ...keys, ...args);
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
      return { reply: reply as Reply, replicas: Number(replicas) };
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
    result: ReserveResult & { reservationId: string },
    donor?: number,
  ): Promise<ReserveResult> {
    const wait = this.opts.wait;
    if (!wait?.replicas) return result;
    const buckets = [home];
    // One server holds every bucket: one marker on it covers both writes.
    if (sale.buckets > 1 && this.requestRedis instanceof Cluster) {
      donor ??= await this.recordedDonor(sale, home, result.reservationId);
      if (donor !== undefined && donor !== home) buckets.push(donor);
    }
    const counts = await this.breaker.run(() =>
      Promise.all(buckets.map((b) => this.markAndWait(this.keys(sale, b), wait))),
    );
    return counts.every((n) => n >= wait.replicas)
      ? result
      : { kind: 'unconfirmed', reservationId: result.reservationId };
  }

  /** Marker write + WAIT on the primary of the bucket's slot: how many replicas acknowledged everything before it. */
  private async markAndWait(k: ActivityKeys, wait: { replicas: number; timeoutMs: number }): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      const results =
        (await this.requestRedis
          .pipeline()
          .hset(k.config, WAIT_MARK_FIELD, Date.now())
          .call('WAIT', wait.replicas, wait.timeoutMs)
          .exec()) ?? [];
      const [[markErr], [waitErr, count]] = results as [[Error | null, unknown], [Error | null, unknown]];
      if (markErr && attempt < 2 && (await this.followedRedirect(markErr))) continue;
      if (markErr || waitErr) throw markErr ?? waitErr;
      return Number(count);
    }
  }

  /** The donor a confirmed borrow took its units from, as its home bucket recorded it; undefined when not borrowed. */
  private async recordedDonor(sale: Sale, home: number, reservationId: string): Promise<number | undefined> {
    const state = await this.breaker.run(() => this.requestRedis.hget(this.keys(sale, home).borrowing, reservationId));
    return state?.startsWith('c|') ? Number(state.slice(2)) : undefined;
  }

  /**
   * A pipeline bound for the wrong cluster node (its slot moved in a failover) comes back with MOVED
   * on the script and an error on WAIT, which ioredis does not retry by itself: refresh the slot map
   * and tell the caller to send it again. False for any other error.
   */
  private async followedRedirect(err: Error): Promise<boolean> {
    if (!(this.requestRedis instanceof Cluster) || !/^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/.test(err.message))
      return false;
    const cluster = this.requestRedis;
    await new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve()));
    return true;
  }

  private borrowDeps() {
    return {
      run: <T>(work: () => Promise<T>) => this.breaker.run(work),
      scripts: this.requestScripts,
      redis: this.requestRedis,
      keys: (sale: Sale, b: number) => this.keys(sale, b),
      log: this.opts.log,
      afterTake: this.opts.afterBorrowTake,
    };
  }

  /** Units left over all buckets, on the request client. */
  private async requestStock(sale: Sale): Promise<number> {
    const values = await this.breaker.run(() =>
      Promise.all(this.allKeys(sale).map((k) => this.requestRedis.get(k.stock))),
    );
    return values.reduce((s, v) => s + Number(v ?? 0), 0);
  }

  /** The user's reservation in this sale, if Redis holds one (request path). A borrow in flight is not one yet. */
  async holderOf(sale: Sale, userId: string): Promise<string | null> {
    const held = await this.breaker.run(() =>
      this.requestRedis.hget(this.keys(sale, homeBucket(userId, sale.buckets)).holders, userId),
    );
    return held && !held.startsWith(PENDING_MARK) ? held : null;
  }

  /**
   * The sold-out path (the flag skips the script, never the holder lookup): the user's reservation as
   * a repeat, else sold out. A borrow of this user still in flight is waited for, as in reserve.
   */
  async repeatOf(sale: Sale, userId: string): Promise<ReserveResult> {
    const deadline = Date.now() + (this.opts.borrowWaitMs ?? 500);
    const holders = this.keys(sale, homeBucket(userId, sale.buckets)).holders;
    for (;;) {
      const held = await this.breaker.run(() => this.requestRedis.hget(holders, userId));
      if (!held) return { kind: 'sold_out' };
      if (!held.startsWith(PENDING_MARK))
        return this.confirmed(sale, homeBucket(userId, sale.buckets), { kind: 'repeat', reservationId: held });
      if (Date.now() >= deadline) return { kind: 'busy' };
      await sleep(10);
    }
  }

  /**
   * lua/enter-6.lua: one lottery entry per user (docs/design.md §10), under the deny list and the eligibility
   * rule, kept with the claims the edge verified (the draw checks eligibility again under the rule in
   * force at the close).
   */
  async enter(input: Sale & { userId: string; quantity: number; claims?: Claims }): Promise<EnterResult> {
    // The entry lives in the user's home bucket, beside that bucket's config (one slot per script).
    const k = this.keys(input, homeBucket(input.userId, input.buckets));
    const reply = await this.breaker.run(() =>
      this.requestScripts.enter(
        [k.entrants, k.config, k.draw, k.denied, k.entryList, k.entrantClaims],
        [input.userId, input.quantity, claimsArg(input.claims)],
      ),
    );
    const code = num(reply[0]);
    switch (code) {
      case EnterCode.ENTERED:
        return { kind: 'entered', entrants: num(reply[1]) };
      case EnterCode.EXISTS:
        return { kind: 'repeat', quantity: num(reply[1]) };
      case EnterCode.LIMIT_EXCEEDED:
        return { kind: 'limit_exceeded' };
      case EnterCode.CLOSED:
        return { kind: 'closed' };
      case EnterCode.PAUSED:
        return { kind: 'paused' };
      case EnterCode.ENDED:
        return { kind: 'ended' };
      case EnterCode.NOT_WARMED:
        return { kind: 'not_warmed' };
      case EnterCode.DENIED:
        return { kind: 'denied' };
      case EnterCode.NOT_ELIGIBLE:
        return { kind: 'not_eligible' };
      default:
        throw unknownCode('enter', code);
    }
  }

  /** Where the lottery stands (request path: the FCFS gate after the window, entry polls). */
  async drawPhase(sale: Sale): Promise<DrawPhase> {
    // The draw sets every bucket's flag; bucket 0's is the last one `markDrawn` writes.
    const v = await this.breaker.run(() => this.requestRedis.get(this.keys(sale, 0).draw));
    return v === 'closed' || v === 'drawn' ? v : 'open';
  }

  /** The user's entry (quantity) and, once drawn, their winning reservation (request path). */
  async entryOf(sale: Sale, userId: string): Promise<{ quantity: number | null; reservationId: string | null }> {
    const k = this.keys(sale, homeBucket(userId, sale.buckets));
    const [quantity, reservationId] = await this.breaker.run(() =>
      Promise.all([this.requestRedis.hget(k.entrants, userId), this.requestRedis.hget(k.winners, userId)]),
    );
    return { quantity: quantity === null ? null : Number(quantity), reservationId };
  }

  /** Clients and slow-log growth of every node in use, on the ops connection (never the request path's). */
  nodeStats(): Promise<RedisNodeStats[]> {
    this.nodeStatsReader ??= new NodeStatsReader(this.redis, this.opts.opsTimeoutMs);
    return this.nodeStatsReader.read();
  }

  /** Health: one PING on the request client (no breaker: health must see Redis itself). */
  async ping(): Promise<void> {
    await this.requestRedis.ping();
  }

  // ── Failover watch: who serves the sale's slots, and which primary a recovery proved ───────────

  /**
   * Per sale and bucket, the identity of the Redis primary serving its slot now: the `run_id` of the
   * server that runs a script on the bucket's key (lua/primary-1.lua), routed exactly like the
   * reserve script. A restart or a promoted replica changes it. null = cannot tell right now (the
   * primary unreachable, the cluster still electing). Asked on the watch's own fail-fast connection.
   */
  async primaries(sales: Sale[]): Promise<Map<string, (string | null)[]>> {
    const result = new Map<string, (string | null)[]>();
    const ask = (key: string) =>
      this.watchAnswer(this.watchScripts().primary([key], []))
        .then((id) => (id ? String(id) : null))
        .catch(() => null);
    if (!(this.requestRedis instanceof Cluster)) {
      // One server serves every key: one question for all sales.
      const id = sales.length ? await ask(this.keys(sales[0]!).stock) : null;
      for (const sale of sales) result.set(sale.activityId, Array(sale.buckets).fill(id));
      return result;
    }
    await Promise.all(
      sales.map(async (sale) => {
        const ids = await Promise.all(this.allKeys(sale).map((k) => ask(k.stock)));
        result.set(sale.activityId, ids);
      }),
    );
    return result;
  }

  /**
   * Per bucket, the primary serving its slot now as lua/replication-1.lua reports it (routed like the
   * reserve script): its run id, `host:port` (the host as the client knows that port), and each
   * replica's `state` and `lag` from INFO replication. null = the primary cannot be asked right now.
   * Asked on the watch's own fail-fast connection, outside the breaker (the watch must see Redis itself).
   */
  async replication(sale: Sale): Promise<(PrimaryReplication | null)[]> {
    return Promise.all(
      this.allKeys(sale).map((k) =>
        this.watchAnswer(this.watchScripts().replication([k.stock], []))
          .then((reply) => {
            const [runId, port, info] = (reply as unknown as string[]).map(String);
            return { runId: runId!, node: `${this.hostOfPort(Number(port))}:${port}`, replicas: replicasOf(info!) };
          })
          .catch(() => null),
      ),
    );
  }

  private watchScripts(): ScriptCommands {
    if (!this.watch) {
      const redis = createRedis(this.opts.redis, {
        commandTimeoutMs: this.opts.requestTimeoutMs,
        queueWhileOffline: false,
        name: 'origin-failover-watch',
      });
      redis.on('error', (err) => this.opts.log.debug({ err: err.message }, 'redis watch error'));
      this.watch = { redis, scripts: defineScripts(redis, this.lua) };
    }
    return this.watch.scripts;
  }

  /**
   * A watch question answers within REDIS_COMMAND_TIMEOUT_MS or counts as unanswered: the command
   * timeout starts only once a command is written to a node, and a cluster client may hold one
   * before that (a slot refresh, redirections) — the watch's round must never wait on it.
   */
  private watchAnswer<T>(question: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('no answer in time')), this.opts.requestTimeoutMs);
    });
    return Promise.race([question, deadline]).finally(() => clearTimeout(timer));
  }

  /** The host the client reaches a node on, by its port (on one machine every node has its own port). */
  private hostOfPort(port: number): string {
    const nodes = this.requestRedis instanceof Cluster ? this.requestRedis.nodes('master') : [this.requestRedis];
    const match = nodes.find((n) => Number(n.options.port) === port);
    return String(match?.options.host ?? nodes[0]?.options.host ?? '127.0.0.1');
  }

  /** Units left in each bucket (null where the bucket holds no stock key: not warmed, or lost). */
  async bucketStocks(sale: Sale): Promise<(number | null)[]> {
    const values = await Promise.all(this.allKeys(sale).map((k) => this.redis.get(k.stock)));
    return values.map((v) => (v === null ? null : Number(v)));
  }

  /** The operator who let this sale open on a layout one failover would stall (REPLICA_RISK_FIELD), or null. */
  async replicaRiskAcceptedBy(sale: Sale): Promise<string | null> {
    return this.redis.hget(this.keys(sale, 0).config, REPLICA_RISK_FIELD);
  }

  async acceptReplicaRisk(sale: Sale, actor: string): Promise<void> {
    await this.redis.hset(this.keys(sale, 0).config, REPLICA_RISK_FIELD, actor);
  }

  /** Warm-up paused the sale for the replica rule (REPLICA_PAUSE_FIELD): an override may reopen it. */
  async markReplicaPause(sale: Sale): Promise<void> {
    await this.redis.hset(this.keys(sale, 0).config, REPLICA_PAUSE_FIELD, Date.now());
  }

  /** True (and the mark cleared) when warm-up had paused the sale for the replica rule. */
  async takeReplicaPause(sale: Sale): Promise<boolean> {
    return (await this.redis.hdel(this.keys(sale, 0).config, REPLICA_PAUSE_FIELD)) === 1;
  }

  /** The primaries a finished failover recovery proved the sale on (per bucket; null where none). */
  async provenPrimaries(sale: Sale): Promise<(string | null)[]> {
    // On the watch's connection: the request connection may be queued behind WAITs (watchScripts).
    this.watchScripts();
    const redis = this.watch!.redis;
    return Promise.all(this.allKeys(sale).map((k) => this.watchAnswer(redis.hget(k.config, PROVEN_FIELD))));
  }

  async markProven(sale: Sale, primaries: string[]): Promise<void> {
    await Promise.all(this.allKeys(sale).map((k, b) => this.redis.hset(k.config, PROVEN_FIELD, primaries[b]!)));
  }

  /**
   * Failover recovery's first step: drop every bucket's stock key, so every origin process's reserve
   * script answers "not warmed" (503 `not_ready`) until recover rebuilds the stock from MySQL and the
   * Stream. Holders, the Stream and its group stay: recover reads and rewrites them.
   */
  async stopForRecovery(sale: Sale): Promise<void> {
    await Promise.all(this.allKeys(sale).map((k) => this.redis.del(k.stock)));
  }

  // ── Operator and job work: patient client ──────────────────────────────────────────────────────

  /** lua/warmup-4.lua on every bucket, the stock split evenly; never resets a sale in progress. */
  async warmup(sale: Sale, load: { stock: number; state: ActivitySwitch; maxPerUser: number }): Promise<WarmupResult> {
    const shares = splitStock(load.stock, sale.buckets);
    const replies = await Promise.all(
      this.allKeys(sale).map((k, b) =>
        this.scripts.warmup(
          [k.stock, k.holders, k.events, k.config],
          [shares[b]!, load.state, load.maxPerUser, CONSUMER_GROUP],
        ),
      ),
    );
    let loaded = false;
    const figures = { stock: 0, holders: 0 };
    for (const reply of replies) {
      const code = num(reply[0]);
      if (code === WarmupCode.HAS_HISTORY) return { kind: 'has_history' };
      if (code !== WarmupCode.LOADED && code !== WarmupCode.ALREADY) throw unknownCode('warmup', code);
      loaded ||= code === WarmupCode.LOADED;
      figures.stock += num(reply[1]);
      figures.holders += num(reply[2]);
    }
    await this.register(sale);
    return loaded ? { kind: 'loaded', ...figures } : { kind: 'already', ...figures };
  }

  private register(sale: Sale): Promise<number> {
    const value = sale.buckets === 1 ? sale.skuId : `${sale.skuId}:${sale.buckets}`;
    return this.redis.hset(this.space.registry, sale.activityId, value);
  }

  /** True when every bucket's stock key exists (warmed and not lost). */
  async isWarm(sale: Sale): Promise<boolean> {
    return (await this.warmBuckets(sale)) === sale.buckets;
  }

  /** How many of the sale's buckets hold a stock key (a cluster master may lose its share alone). */
  async warmBuckets(sale: Sale): Promise<number> {
    const exists = await Promise.all(this.allKeys(sale).map((k) => this.redis.exists(k.stock)));
    return exists.filter((n) => n === 1).length;
  }

  /** Units left in Redis over all buckets, or null when no bucket is warm. */
  async stock(sale: Sale): Promise<number | null> {
    const values = await Promise.all(this.allKeys(sale).map((k) => this.redis.get(k.stock)));
    if (values.every((v) => v === null)) return null;
    return values.reduce((s, v) => s + Number(v ?? 0), 0);
  }

  /** Writes the switch the scripts read — only on warmed buckets (no half-activities). */
  async setState(sale: Sale, state: ActivitySwitch): Promise<void> {
    for (const k of this.allKeys(sale))
      if (await this.redis.exists(k.stock)) await this.redis.hset(k.config, 'state', state);
  }

  // ── Access rules the scripts read (origin/access/sale-rules.ts decides when) ────────────────────

  /**
   * The eligibility rule (JSON, "" = everyone) into every bucket's config hash, warm or not: a bucket
   * warmed later keeps it (warm-up only seeds an absent field). `onlyIfAbsent`: warm-up's seed, so a
   * rule an operator's PATCH wrote meanwhile is never overwritten by warm-up's older read.
   */
  async setEligibility(sale: Sale, rule: string, onlyIfAbsent = false): Promise<void> {
    await Promise.all(
      this.allKeys(sale).map((k) =>
        onlyIfAbsent
          ? this.redis.hsetnx(k.config, ELIGIBILITY_FIELD, rule)
          : this.redis.hset(k.config, ELIGIBILITY_FIELD, rule),
      ),
    );
  }

  /** Deny-list rows into every bucket's `denied` hash (lua/deny-1.lua: newer revisions only). */
  async applyDeny(sale: Sale, rows: DenyRevision[]): Promise<void> {
    for (let i = 0; i < rows.length; i += DENY_BATCH) {
      const pairs = rows.slice(i, i + DENY_BATCH).flatMap((r) => [r.userId, r.denied ? r.revision : -r.revision]);
      await Promise.all(this.allKeys(sale).map((k) => this.scripts.deny([k.denied], pairs)));
    }
  }

  /**
   * lua/release-3.lua on the user's home bucket: compensation. `cap` = MySQL available (-1: give
   * nothing back); with buckets the other buckets' stock counts against it.
   */
  async release(
    sale: Sale,
    r: { reservationId: string; userId: string; quantity: number; cap: number },
  ): Promise<ReleaseResult> {
    const home = homeBucket(r.userId, sale.buckets);
    const k = this.keys(sale, home);
    let cap = r.cap;
    if (cap >= 0 && sale.buckets > 1) {
      const others = this.allKeys(sale).filter((_, b) => b !== home);
      const stocks = await Promise.all(others.map((o) => this.redis.get(o.stock)));
      cap -= stocks.reduce((s, v) => s + Number(v ?? 0), 0);
      cap = Math.max(cap, 0);
    }
    const reply = await this.scripts.release(
      [k.stock, k.holders, k.released],
      [r.reservationId, r.userId, r.quantity, cap],
    );
    const code = num(reply[0]);
    if (code === ReleaseCode.NOT_WARMED) return { kind: 'not_warmed' };
    if (code === ReleaseCode.RELEASED) return { kind: 'released', restocked: num(reply[1]) };
    if (code === ReleaseCode.ALREADY) return { kind: 'already', restocked: num(reply[1]) };
    throw unknownCode('release', code);
  }

  /** lua/refill-2.lua: a timed-out order's units back on sale, once per reservation (one fixed bucket per reservation). */
  async refill(sale: Sale, r: { reservationId: string; quantity: number }): Promise<RefillResult> {
    const k = this.keys(sale, refillBucket(r.reservationId, sale.buckets));
    const reply = await this.scripts.refill([k.stock, k.refilled], [r.reservationId, r.quantity]);
    const code = num(reply[0]);
    if (code === RefillCode.NOT_WARMED) return { kind: 'not_warmed' };
    if (code === RefillCode.REFILLED) return { kind: 'refilled', stock: num(reply[1]) };
    if (code === RefillCode.ALREADY) return { kind: 'already', stock: num(reply[1]) };
    throw unknownCode('refill', code);
  }

  /**
   * A tranche of held-back units goes on sale, once per release id. The same atomic step as a
   * refill (lua/refill-2.lua: add units once per id, never create a stock key), on its own hash so
   * reconciliation tells tranches from refilled orders. With buckets the units are split evenly
   * over them, each bucket's share idempotent on its own: a release cut short by a crash is finished
   * by the retry, the buckets already done answering ALREADY.
   */
  async releaseTranche(sale: Sale, r: { releaseId: string; units: number }): Promise<RefillResult> {
    const shares = splitStock(r.units, sale.buckets);
    let stock = 0;
    let added = false;
    for (const [b, k] of this.allKeys(sale).entries()) {
      if (shares[b] === 0) {
        stock += Number((await this.redis.get(k.stock)) ?? 0);
        continue;
      }
      const reply = await this.scripts.refill([k.stock, k.tranches], [r.releaseId, shares[b]!]);
      const code = num(reply[0]);
      if (code === RefillCode.NOT_WARMED) return { kind: 'not_warmed' };
      if (code !== RefillCode.REFILLED && code !== RefillCode.ALREADY) throw unknownCode('releaseTranche', code);
      added ||= code === RefillCode.REFILLED;
      stock += num(reply[1]);
    }
    return added ? { kind: 'refilled', stock } : { kind: 'already', stock };
  }

  /**
   * Warm-up verification: what Redis holds for the sale — each bucket's stock key and value, bucket
   * 0's config hash, whether every bucket has its consumer group, and the settlement registry.
   */
  async warmState(sale: Sale): Promise<{
    stocks: { key: string; value: number | null }[];
    config: Record<string, string>;
    group: boolean;
    registered: boolean;
  }> {
    const all = this.allKeys(sale);
    const [values, config, registered, groups] = await Promise.all([
      Promise.all(all.map((k) => this.redis.get(k.stock))),
      this.redis.hgetall(this.keys(sale).config),
      this.redis.hexists(this.space.registry, sale.activityId),
      Promise.all(all.map((k) => this.ledger.groupInfo(k.events))),
    ]);
    return {
      stocks: all.map((k, b) => ({ key: k.stock, value: values[b] === null ? null : Number(values[b]) })),
      config,
      group: groups.every((g) => g !== null),
      registered: registered === 1,
    };
  }

  /** lua/requeue-5.lua on the user's home bucket: an admin's retry of a dead-lettered reservation. */
  async requeue(sale: Sale, e: ReservationEvent): Promise<RequeueResult> {
    const k = this.keys(sale, homeBucket(e.userId, sale.buckets));
    const reply = await this.scripts.requeue(
      [k.stock, k.holders, k.events, k.released, k.denied],
      [e.reservationId, e.userId, e.quantity, e.requestId, e.traceId, Date.now()],
    );
    const code = num(reply[0]);
    switch (code) {
      case RequeueCode.REQUEUED:
        return { kind: 'requeued', stock: num(reply[1]) };
      case RequeueCode.ALREADY:
        return { kind: 'already' };
      case RequeueCode.NOT_WARMED:
        return { kind: 'not_warmed' };
      case RequeueCode.NOT_RELEASED:
        return { kind: 'not_released' };
      case RequeueCode.HOLDS_OTHER:
        return { kind: 'holds_other' };
      case RequeueCode.SOLD_OUT:
        return { kind: 'sold_out' };
      case RequeueCode.DENIED:
        return { kind: 'denied' };
      default:
        throw unknownCode('requeue', code);
    }
  }

  /**
   * lua/recover-9.lua on every bucket: rewrites the sale's Redis state from proven figures. Each
   * bucket is all or nothing; the stock is split evenly, holders go to their home bucket.
   */
  async recover(sale: Sale, input: RecoverInput): Promise<RecoverResult> {
    // The stock is proven for the whole sale only: a bucket still selling would be counted twice.
    if ((await this.warmBuckets(sale)) > 0) return { kind: 'warm' };
    const shares = splitStock(input.stock, sale.buckets);
    const per = Array.from({ length: sale.buckets }, () => ({
      holders: new Map<string, string>(),
      released: new Map<string, number>(),
      refilled: new Map<string, number>(),
      tranches: new Map<string, number>(),
      restore: [] as Omit<ReservationEvent, 'streamId'>[],
    }));
    for (const [userId, rid] of input.holders) per[homeBucket(userId, sale.buckets)]!.holders.set(userId, rid);
    for (const [rid, r] of input.released) per[homeBucket(r.userId, sale.buckets)]!.released.set(rid, r.units);
    for (const [rid, units] of input.refilled) per[refillBucket(rid, sale.buckets)]!.refilled.set(rid, units);
    for (const [id, units] of input.tranches)
      for (const [b, share] of splitStock(units, sale.buckets).entries())
        if (share > 0) per[b]!.tranches.set(id, share);
    for (const e of input.restore ?? []) per[homeBucket(e.userId, sale.buckets)]!.restore.push(e);
    const pairs = (m: Map<string, string | number>) => [m.size, ...[...m].flat()];
    let holders = 0;
    for (const [b, k] of this.allKeys(sale).entries()) {
      const reply = await this.scripts.recover(
        [k.stock, k.holders, k.events, k.config, k.released, k.refilled, k.borrowing, k.lent, k.tranches],
        [
          shares[b]!,
          input.state,
          input.maxPerUser,
          CONSUMER_GROUP,
          ...pairs(per[b]!.holders),
          ...pairs(per[b]!.released),
          ...pairs(per[b]!.refilled),
          ...pairs(per[b]!.tranches),
          per[b]!.restore.length,
          ...per[b]!.restore.flatMap((e) => [e.reservationId, e.requestId, e.userId, e.quantity, e.traceId, e.ts]),
        ],
      );
      const code = num(reply[0]);
      if (code === RecoverCode.WARM) return { kind: 'warm' };
      if (code === RecoverCode.NO_STREAM) return { kind: 'no_stream' };
      if (code !== RecoverCode.RECOVERED) throw unknownCode('recover', code);
      holders += num(reply[2]);
    }
    await this.register(sale);
    return { kind: 'recovered', stock: input.stock, holders };
  }

  /**
   * Borrows left half-done (marked pending, or units lent, then the process died) older than
   * `staleMs`: given up at home and their units returned to the donor. Returns what was returned.
   */
  returnStranded(sale: Sale, staleMs: number): Promise<StrandedBorrow[]> {
    return returnStranded(
      { scripts: this.scripts, redis: this.redis, keys: (s: Sale, b: number) => this.keys(s, b), log: this.opts.log },
      sale,
      Date.now() - staleMs,
    );
  }

  // ── The lottery draw (origin/lottery/draw.ts): patient client ───────────────────────────────────

  /** No entry after this (lua/enter-6.lua answers CLOSED); keeps `drawn` if already there. */
  async closeEntries(sale: Sale): Promise<void> {
    for (const k of this.allKeys(sale)) await this.redis.set(k.draw, 'closed', 'NX');
  }

  /** The winners are final: FCFS may start, polls answer results. */
  async markDrawn(sale: Sale): Promise<void> {
    for (const k of this.allKeys(sale).reverse()) await this.redis.set(k.draw, 'drawn');
  }

  /** Entries per bucket (the closed list's length in each), bucket 0 first. */
  async entryCounts(sale: Sale): Promise<number[]> {
    return Promise.all(this.allKeys(sale).map((k) => this.redis.llen(k.entryList)));
  }

  /**
   * Entries [start, start + count) of one bucket's list, in entry order, as stored ("userId:quantity",
   * parseEntry reads one), joined by "\n" into one string (lua/entry-page-1.lua): the draw reads a
   * million of them and hashes most without keeping any, so not even a string per entry is made.
   * Pages are addressed by index, so a reader may ask for several at once.
   */
  async entryPage(sale: Sale, bucket: number, start: number, count: number): Promise<string> {
    const page: unknown = await this.scripts['entry-page'](
      [this.keys(sale, bucket).entryList],
      [start, start + count - 1],
    );
    if (typeof page !== 'string') throw new Error('entry-page script answered no string');
    return page;
  }

  /** The claims each user entered with (absent: none forwarded). */
  async entrantClaims(sale: Sale, userIds: string[]): Promise<Map<string, Claims>> {
    const byBucket = new Map<number, string[]>();
    for (const u of userIds) {
      const b = homeBucket(u, sale.buckets);
      let list = byBucket.get(b);
      if (!list) byBucket.set(b, (list = []));
      list.push(u);
    }
    const found = new Map<string, Claims>();
    await Promise.all(
      [...byBucket].map(async ([b, users]) => {
        const values = await this.redis.hmget(this.keys(sale, b).entrantClaims, ...users);
        values.forEach((v, i) => v !== null && found.set(users[i]!, JSON.parse(v) as Claims));
      }),
    );
    return found;
  }

  /**
   * The reserve decision for a batch of the draw's winners, in draw order: the rule a purchase uses
   * (limit, stock, quantity, deny list); eligibility is the draw's own decision. One bucket: one call
   * of lua/draw-reserve-6.lua on the patient client (draw-reservations.ts), which decides them one
   * after the other. Several buckets: the request path's reserve with its borrowing, one at a time.
   */
  async reserveForDraw(sale: Sale, winners: DrawReservation[]): Promise<ReserveResult[]> {
    if (sale.buckets === 1)
      return reserveDrawBatch(this.scripts['draw-reserve'], this.keys(sale, 0), sale.activityId, winners);
    const results: ReserveResult[] = [];
    for (const w of winners) results.push(await this.reserve({ ...sale, ...w, eligibilityDecided: true }));
    return results;
  }

  /** Each winner in their home bucket's `winners` hash. */
  async recordWinners(sale: Sale, winners: Map<string, string>): Promise<void> {
    const byBucket = new Map<number, string[]>();
    for (const [userId, reservationId] of winners) {
      const b = homeBucket(userId, sale.buckets);
      let fields = byBucket.get(b);
      if (!fields) byBucket.set(b, (fields = []));
      fields.push(userId, reservationId);
    }
    for (const [b, fields] of byBucket) await this.redis.hset(this.keys(sale, b).winners, ...fields);
  }

  /** Entrants the draw passed over (denied / not eligible), each in their home bucket's set. */
  async recordExcluded(sale: Sale, userIds: string[]): Promise<void> {
    const byBucket = new Map<number, string[]>();
    for (const u of userIds) {
      const b = homeBucket(u, sale.buckets);
      let list = byBucket.get(b);
      if (!list) byBucket.set(b, (list = []));
      list.push(u);
    }
    for (const [b, users] of byBucket) await this.redis.sadd(this.keys(sale, b).drawExcluded, ...users);
  }

  /** Every entrant the draw has passed over so far. */
  async excludedEntrants(sale: Sale): Promise<Set<string>> {
    const all = new Set<string>();
    for (const k of this.allKeys(sale)) for (const u of await this.redis.smembers(k.drawExcluded)) all.add(u);
    return all;
  }

  /** userId → reservationId of every winner recorded so far. */
  async winners(sale: Sale): Promise<Map<string, string>> {
    const all = new Map<string, string>();
    for (const k of this.allKeys(sale))
      for (const [userId, reservationId] of Object.entries(await this.redis.hgetall(k.winners)))
        all.set(userId, reservationId);
    return all;
  }

  /** After a sale: every key expires after `seconds`, and settlement forgets the sale. */
  async expire(sale: Sale, seconds: number): Promise<void> {
    for (const k of this.allKeys(sale))
      await Promise.all(Object.values(k).map((key) => this.redis.expire(key, seconds)));
    await this.redis.hdel(this.space.registry, sale.activityId);
  }

  /**
   * After cleanup, every key of the sale that still exists must expire (the console's checklist):
   * each existing key with its time to live in ms (-1: no expiry). Keys that are gone are left out.
   */
  async keyTtls(sale: Sale): Promise<{ key: string; ttlMs: number }[]> {
    const keys = this.allKeys(sale).flatMap((k) => Object.values(k));
    const ttls = await Promise.all(keys.map((key) => this.redis.pttl(key)));
    return keys.map((key, i) => ({ key, ttlMs: ttls[i]! })).filter((k) => k.ttlMs !== -2);
  }

  /** Whether the settlement registry (written by warm-up and recover) still lists the sale. */
  async isRegistered(activityId: string): Promise<boolean> {
    return (await this.redis.hexists(this.space.registry, activityId)) === 1;
  }

  /** Warmed sales (the registry written by warm-up and recover): what consumers and jobs look after. */
  async warmedSales(): Promise<Sale[]> {
    const registry = await this.redis.hgetall(this.space.registry);
    return Object.entries(registry).map(([activityId, value]) => {
      const [skuId, buckets] = value.split(':');
      return { activityId, skuId: skuId!, buckets: Number(buckets ?? 1) };
    });
  }

  // ── The Streams: ledger reads (reconcile, recover, gauges) and consumers (settlement) ──────────

  /** The consumer groups of every bucket, summed. */
  async groupInfo(sale: Sale): Promise<{ pending: number; lag: number } | null> {
    const infos = await Promise.all(this.allKeys(sale).map((k) => this.ledger.groupInfo(k.events)));
    if (infos.every((i) => i === null)) return null;
    return infos.reduce((s, i) => ({ pending: s.pending + (i?.pending ?? 0), lag: s.lag + (i?.lag ?? 0) }), {
      pending: 0,
      lag: 0,
    });
  }

  /** Reconciliation's Redis snapshot, every bucket summed, with the units in transit between buckets. */
  async ledgerSnapshot(sale: Sale): Promise<LedgerSnapshot | null> {
    const parts = await Promise.all(this.allKeys(sale).map((k) => this.ledger.snapshot(k)));
    if (parts.some((p) => p === null)) return null;
    const all = parts as BucketSnapshot[];
    return {
      stock: all.reduce((s, p) => s + p.stock, 0),
      bounds: all.flatMap((p) => p.bounds),
      units: new Map(all.flatMap((p) => [...p.units])),
      open: all.flatMap((p) => p.open),
      released: Object.assign({}, ...all.map((p) => p.released)),
      refilled: Object.assign({}, ...all.map((p) => p.refilled)),
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
    return Promise.all(this.allKeys(sale).map((k) => this.ledger.fingerprint(k)));
  }

  /** Every bucket's `tranches` hash, shares of one release summed: what Redis added of each release. */
  async tranches(sale: Sale): Promise<Map<string, number>> {
    const hashes = await Promise.all(this.allKeys(sale).map((k) => this.redis.hgetall(k.tranches)));
    const units = new Map<string, number>();
    for (const h of hashes) for (const [id, u] of Object.entries(h)) units.set(id, (units.get(id) ?? 0) + Number(u));
    return units;
  }

  /** Reservation ids appended after the snapshot's bounds (one per bucket; granted after it). */
  async reservationsAfter(sale: Sale, bounds: (string | null)[]): Promise<Set<string>> {
    const later = new Set<string>();
    for (const [b, k] of this.allKeys(sale).entries()) {
      for (const id of await this.ledger.reservationsAfter(k.events, bounds[b] ?? '0-0')) later.add(id);
    }
    return later;
  }

  /** Every reservation of every bucket's Stream and whether it is still open; null when a Stream or group is gone. */
  async streamReservations(sale: Sale): Promise<Map<string, StreamReservation> | null> {
    const merged = new Map<string, StreamReservation>();
    for (const k of this.allKeys(sale)) {
      const part = await this.ledger.reservations(k.events);
      if (!part) return null;
      for (const [rid, r] of part) merged.set(rid, r);
    }
    return merged;
  }

  /** One consumer per bucket Stream, each on a connection of its own (XREADGROUP BLOCK holds it). */
  openEventReaders(sale: Sale, consumer: string, blockMs: number): SaleEventReader[] {
    return this.allKeys(sale).map((k) => {
      const redis = createRedis(this.opts.redis, {
        commandTimeoutMs: blockMs + 5_000,
        queueWhileOffline: true,
        name: 'origin-settle',
      });
      redis.on('error', (err) => this.opts.log.debug({ err: err.message }, 'settlement redis error'));
      const reader = new SaleEventReader(redis, k.events, consumer, () => this.readers.delete(reader));
      this.readers.add(reader);
      return reader;
    });
  }

  // ── Sold-out transitions between origin processes (pub/sub) ────────────────────────────────────

  async publishSoldOut(activityId: string, soldOut: boolean): Promise<void> {
    await this.redis.publish(this.space.soldOutChannel, `${activityId}:${soldOut ? 1 : 0}`);
  }

  async onSoldOut(listener: (activityId: string, soldOut: boolean) => void): Promise<void> {
    this.subscriber ??= createRedis(this.opts.redis, {
      commandTimeoutMs: 5_000,
      queueWhileOffline: true,
      name: 'origin-soldout-sub',
    });
    this.subscriber.on('error', (err) => this.opts.log.debug({ err: err.message }, 'redis subscriber error'));
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.space.soldOutChannel) return;
      const [activityId, on] = message.split(':');
      if (activityId) listener(activityId, on === '1');
    });
    await this.subscriber.subscribe(this.space.soldOutChannel);
  }

  async close(): Promise<void> {
    this.nodeStatsReader?.close();
    await Promise.allSettled([
      this.requestRedis.quit(),
      this.redis.quit(),
      this.subscriber?.quit(),
      this.watch?.redis.quit(),
      ...[...this.readers].map((r) => r.close()),
    ]);
  }
}

/** What lua/reserve-6.lua answered; `borrow` and `pending` only come from a sale with buckets. */
type ReserveReply =
  | Exclude<ReserveResult, { kind: 'busy' } | { kind: 'unconfirmed' }>
  /** This bucket cannot serve: the user is marked pending here; `homeStock` is what it still has. */
  | { kind: 'borrow'; reservationId: string; homeStock: number }
  /** The same user's borrow is in flight. */
  | { kind: 'pending' };

/** The one decoding of the reserve script's reply (`{code, reservationId?, remaining?}`). */
function decodeReserve(reply: Reply): ReserveReply {
  const code = num(reply[0]);
  switch (code) {
    case ReserveCode.OK:
      return { kind: 'reserved', reservationId: String(reply[1]), remaining: num(reply[2]) };
    case ReserveCode.EXISTS:
      return { kind: 'repeat', reservationId: String(reply[1]) };
    case ReserveCode.BORROW:
      return { kind: 'borrow', reservationId: String(reply[1]), homeStock: num(reply[2]) };
    case ReserveCode.PENDING:
      return { kind: 'pending' };
    case ReserveCode.SOLD_OUT:
      return { kind: 'sold_out' };
    case ReserveCode.INSUFFICIENT_STOCK:
      return { kind: 'insufficient_stock' };
    case ReserveCode.LIMIT_EXCEEDED:
      return { kind: 'limit_exceeded' };
    case ReserveCode.PAUSED:
      return { kind: 'paused' };
    case ReserveCode.ENDED:
      return { kind: 'ended' };
    case ReserveCode.NOT_WARMED:
      return { kind: 'not_warmed' };
    case ReserveCode.DENIED:
      return { kind: 'denied' };
    case ReserveCode.NOT_ELIGIBLE:
      return { kind: 'not_eligible' };
    default:
      throw unknownCode('reserve', code);
  }
}

const unknownCode = (script: string, code: number) => new Error(`${script} script returned unknown code ${code}`);
