/**
 * AdmissionDO (docs/design.md §4, §10): one of N shards per activity, each a token bucket of
 * admissionRatePerSec / N that caps what the edge forwards to the origin. `take(n)` grants up to n
 * tokens: isolates lease small batches and spend them from memory (edge/gates.ts) instead of
 * calling a shard per purchase. With `overflow: "queue"` the shard also keeps the waiting room
 * (edge/durable/waiting-line.ts): `enter` takes a place in line, `poll` answers it, `finish` records a
 * kept purchase's outcome, and while anyone waits no lease gets a token.
 *
 * The line is served from memory (parallel arrays, edge/durable/waiting-slots.ts) and kept in this
 * object's SQLite storage (edge/durable/line-store.ts), so a restart or an eviction keeps every place
 * and its order (docs/waiting-room.md). A join is written before its answer, grouped with the joins
 * arriving within WAITING_JOIN_GROUP_MS (WAITING_JOIN_WRITE = "sync", the default), or with the next
 * batch ("batched": a crash can then lose the joins of the last interval, whose buyers' polls answer
 * 404 "the line was reset"). Other changes (turns, outcomes, drops) go in batches at most every
 * WAITING_LINE_FLUSH_MS; a poll writes nothing unless it lengthens its entry's interval. What a crash
 * can lose besides costs nobody a place: after a load every entry's poll deadline restarts
 * (WaitingLine.restore).
 */
import { DurableObject } from 'cloudflare:workers';
import { settingsOf } from '../settings.js';
import { LineStore } from './line-store.js';
import type { KeptPurchase, LineAnswer, LineFigures, LineLimits, LineOutcome } from './line-entries.js';
import { WaitingLine } from './waiting-line.js';

export interface AdmissionGrant {
  granted: number;
  /** When nothing was granted: how long until one token is available. */
  retryAfterMs: number;
}

/**
 * Entry ids name the line's incarnation, stored with it: an id stays valid across restarts, and an id
 * of a line this object no longer has (its storage was reset) is answered as such, never as someone else's.
 */
export type EntryAnswer = (LineAnswer & { epoch: string }) | { kind: 'admitted'; granted: number; epoch: string };

export type ShardFigures = LineFigures & { storageBytes: number };

/** A shard logs its line's figures at most this often while it has a line (or had one since the last line). */
const FIGURES_LOG_EVERY_MS = 5_000;

export class AdmissionDO extends DurableObject<Env> {
  private line: WaitingLine;
  private epoch = Date.now().toString(36);
  private readonly store: LineStore | null;
  private readonly flushMs: number;
  private readonly joinsAtOnce: boolean;
  private readonly joinGroupMs: number;
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private pendingJoinWrite: Promise<void> | undefined;
  private calls = 0;
  private lastFiguresLog = 0;
  private loggedIdle = true;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const settings = settingsOf(env);
    this.flushMs = settings.waitingFlushMs;
    this.joinsAtOnce = this.joinWrite(settings.waitingJoinWrite) === 'sync';
    this.joinGroupMs = settings.waitingJoinGroupMs;
    this.store = this.openStore();
    this.line = new WaitingLine({ trackChanges: this.store !== null });
    // The SQL API is synchronous, so the line is loaded before the constructor returns: no call can
    // reach this object before it (what blockConcurrencyWhile guards against for asynchronous loads).
    const saved = this.store?.load();
    if (saved) {
      this.epoch = saved.epoch;
      this.line = WaitingLine.restore(saved.entries, saved.meta, Date.now(), { trackChanges: true });
    }
  }

  /** Where the line is kept; null keeps it in memory only (the benchmark's baseline, bench/waiting-line.ts). */
  protected openStore(): LineStore | null {
    return new LineStore(this.ctx.storage);
  }

  /** When joins are written (WAITING_JOIN_WRITE); the benchmark measures both modes in one run. */
  protected joinWrite(configured: 'sync' | 'batched'): 'sync' | 'batched' {
    return configured;
  }

  /** Calls and tokens granted since this object started (diagnostics and tests). */
  async stats(): Promise<{ calls: number; granted: number }> {
    return { calls: this.calls, granted: this.line.figuresAt(Date.now()).tokensGranted };
  }

  /** Up to n tokens for an isolate's lease (reject mode, and queue mode while nobody waits). */
  async take(n: number, ratePerSec: number): Promise<AdmissionGrant> {
    this.calls++;
    return this.line.grant(n, limitsFor(ratePerSec), Date.now());
  }

  /**
   * Queue mode: tokens if nobody waits, else this user's place in line (a repeat click: the same one),
   * or `full` when the line already holds `limits.maxWaiting` entries (nothing is written for it).
   */
  async enter(purchase: KeptPurchase, want: number, limits: LineLimits): Promise<EntryAnswer> {
    this.calls++;
    const answer = this.line.enter(purchase, want, limits, Date.now());
    // A new place is written before this answer leaves, in one transaction with every other place
    // taken meanwhile (group commit: a flash crowd's joins share their writes).
    if (this.joinsAtOnce && this.line.hasChanges) await this.writeJoinsNow();
    else this.saveLater();
    this.logFigures();
    return { ...answer, epoch: this.epoch };
  }

  /**
   * A poll of a waiting entry. `closeWith` (sold_out, paused, ended) resolves the whole line first:
   * every waiting entry learns it on its next poll, with no origin call.
   */
  async poll(epoch: string, seq: number, userId: string, limits: LineLimits, closeWith?: string): Promise<EntryAnswer> {
    this.calls++;
    const now = Date.now();
    if (closeWith) this.line.close(closeWith, limits, now);
    const answer: LineAnswer =
      epoch === this.epoch ? this.line.poll(seq, userId, limits, now) : { kind: 'gone', reason: { why: 'reset' } };
    this.saveLater();
    this.logFigures();
    return { ...answer, epoch: this.epoch };
  }

  async finish(epoch: string, seq: number, userId: string, outcome: LineOutcome): Promise<void> {
    if (epoch === this.epoch) this.line.finish(seq, userId, outcome, Date.now());
    this.saveLater();
  }

  async retryLater(epoch: string, seq: number, userId: string, limits: LineLimits): Promise<void> {
    if (epoch === this.epoch) this.line.retryLater(seq, userId, limits, Date.now());
    this.saveLater();
  }

  /** The line's figures, and the bytes this shard's storage holds (the line's rows and its own). */
  async figures(): Promise<ShardFigures> {
    return { ...this.line.figuresAt(Date.now()), storageBytes: this.store ? this.ctx.storage.sql.databaseSize : 0 };
  }

  /** The changed entries go out with the next batch, at most WAITING_LINE_FLUSH_MS from now. */
  private saveLater(): void {
    if (!this.store || this.flushTimer !== undefined || !this.line.hasChanges) return;
    this.flushTimer = setTimeout(() => this.flush(), this.flushMs);
  }

  /**
   * Resolves once the changes made so far are written, WAITING_JOIN_GROUP_MS from the first join
   * waiting for it, so the joins that arrive meanwhile go in the same transaction. The output gate
   * holds each answer until the write is stored.
   */
  private writeJoinsNow(): Promise<void> {
    this.pendingJoinWrite ??= new Promise<void>((resolve, reject) =>
      setTimeout(() => {
        this.pendingJoinWrite = undefined;
        try {
          this.flush();
          resolve();
        } catch (err) {
          // Not stored: the joins are not answered as places (the buyers' clicks fail and are retried).
          reject(err);
        }
      }, this.joinGroupMs),
    );
    return this.pendingJoinWrite;
  }

  /** Writes every entry changed since the last batch, and the line's row, in one transaction. */
  private flush(): void {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (!this.store) return;
    const seqs = this.line.takeChanges();
    if (seqs.length === 0) return;
    const now = Date.now();
    this.store.save(
      this.epoch,
      this.line.meta(),
      seqs.map((seq) => [seq, this.line.entryRow(seq)]),
      now,
    );
  }

  /** The line's figures in the log (how the edge exposes its figures): while a line exists, every few seconds. */
  private logFigures(): void {
    const now = Date.now();
    if (now - this.lastFiguresLog < FIGURES_LOG_EVERY_MS) return;
    const figures = this.line.figuresAt(now);
    if (figures.waiting === 0 && this.loggedIdle) return;
    this.lastFiguresLog = now;
    this.loggedIdle = figures.waiting === 0;
    console.log(
      JSON.stringify({ at: new Date(now).toISOString(), msg: 'waiting room', shard: this.ctx.id.name, ...figures }),
    );
  }
}

/** Limits for plain leases (reject mode): polls never happen there. */
function limitsFor(ratePerSec: number): LineLimits {
  return { ratePerSec, pollMinMs: 1_000, pollBudgetPerSec: 500 };
}
