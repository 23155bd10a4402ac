/**
 * AdmissionDO (DESIGN §4, §10): one of N shards per activity, each a token bucket of
 * admissionRatePerSec / N that caps what the edge forwards to the origin. `take(n)` grants up to n
 * tokens: isolates lease small batches and spend them from memory (edge/gates.ts) instead of
 * calling a shard per purchase. With `overflow: "queue"` the shard also keeps the waiting room
 * (edge/durable/waiting-line.ts): `enter` takes a place in line, `poll` answers it, `finish` records a
 * kept purchase's outcome, and while anyone waits no lease gets a token.
 *
 * The line lives in this object's memory only (about 200 bytes per waiting entry, docs/waiting-room.md): if the
 * object is restarted, polls of the lost entries answer 404 and the buyers click again.
 */
import { DurableObject } from 'cloudflare:workers';
import {
  WaitingLine,
  type KeptPurchase,
  type LineAnswer,
  type LineFigures,
  type LineLimits,
  type LineOutcome,
} from './waiting-line.js';

export interface AdmissionGrant {
  granted: number;
  /** When nothing was granted: how long until one token is available. */
  retryAfterMs: number;
}

/** Entry ids name this object's incarnation, so an id from before a restart is unknown, not someone else's. */
export type EntryAnswer = (LineAnswer & { epoch: string }) | { kind: 'admitted'; granted: number; epoch: string };

/** A shard logs its line's figures at most this often while it has a line (or had one since the last line). */
const FIGURES_LOG_EVERY_MS = 5_000;

export class AdmissionDO extends DurableObject<Env> {
  private readonly line = new WaitingLine();
  private readonly epoch = Date.now().toString(36);
  private calls = 0;
  private lastFiguresLog = 0;
  private loggedIdle = true;

  /** Calls and tokens granted since this object started (diagnostics and tests). */
  async stats(): Promise<{ calls: number; granted: number }> {
    return { calls: this.calls, granted: this.line.figuresAt(Date.now()).tokensGranted };
  }

  /** Up to n tokens for an isolate's lease (reject mode, and queue mode while nobody waits). */
  async take(n: number, ratePerSec: number): Promise<AdmissionGrant> {
    this.calls++;
    return this.line.grant(n, limitsFor(ratePerSec), Date.now());
  }

  /** Queue mode: tokens if nobody waits, else this user's place in line (a repeat click: the same one). */
  async enter(purchase: KeptPurchase, want: number, limits: LineLimits): Promise<EntryAnswer> {
    this.calls++;
    const answer = this.line.enter(purchase, want, limits, Date.now());
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
    const answer: LineAnswer = epoch === this.epoch ? this.line.poll(seq, userId, limits, now) : { kind: 'gone' };
    this.logFigures();
    return { ...answer, epoch: this.epoch };
  }

  async finish(epoch: string, seq: number, userId: string, outcome: LineOutcome): Promise<void> {
    if (epoch === this.epoch) this.line.finish(seq, userId, outcome, Date.now());
  }

  async retryLater(epoch: string, seq: number, userId: string, limits: LineLimits): Promise<void> {
    if (epoch === this.epoch) this.line.retryLater(seq, userId, limits, Date.now());
  }

  async figures(): Promise<LineFigures> {
    return this.line.figuresAt(Date.now());
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
