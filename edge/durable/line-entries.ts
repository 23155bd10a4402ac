/**
 * What one admission shard's waiting line keeps and answers (edge/durable/waiting-line.ts): the kept
 * purchase, the limits a line runs under, its answers, an entry as the shard stores it
 * (edge/durable/line-store.ts), its figures, and the line's fixed settings. The shard, the edge's
 * waiting-room routes and the line itself share these shapes.
 */
import type { Claims } from '../../contract/eligibility.js';

/** What a waiting entry keeps of a verified purchase to forward it later (the ticket is never re-checked). */
export interface KeptPurchase {
  userId: string;
  requestId: string;
  quantity: number;
  /** The JWT claims verified when the purchase was made, for the origin's eligibility check at its turn. */
  claims?: Claims;
}

/** A finished entry's outcome: the reservation, or the contract code that refused it. */
export type LineOutcome = { reservationId: string } | { error: string };

export interface LineLimits {
  /** This shard's admission rate (the activity's rate / shard count). */
  ratePerSec: number;
  /** Shortest pollAfterMs given out (WAITING_POLL_MIN_MS). */
  pollMinMs: number;
  /** Polls per second the shard's whole line may cause, roughly (WAITING_POLLS_PER_SEC). */
  pollBudgetPerSec: number;
  /** Longest pollAfterMs given out (WAITING_POLL_MAX_MS); absent: no ceiling. */
  pollMaxMs?: number;
  /** Most entries waiting in this shard's line (WAITING_LINE_MAX); a join beyond is refused. Absent: no cap. */
  maxWaiting?: number;
}

/**
 * Why a place is no longer held: `expired` — not polled within `limitMs` (3 × the pollAfterMs it was
 * last given); `reset` — the id names a line this shard no longer has (its storage was reset);
 * `unknown` — no such entry of this user (never was, or finished more than OUTCOME_KEPT_MS ago).
 */
export type GoneReason = { why: 'expired'; limitMs: number } | { why: 'reset' } | { why: 'unknown' };

export type LineAnswer =
  | { kind: 'waiting'; seq: number; position: number; etaMs: number; pollAfterMs: number }
  | { kind: 'turn'; seq: number; purchase: KeptPurchase }
  | { kind: 'done'; seq: number; outcome: LineOutcome }
  | { kind: 'too_soon'; retryAfterMs: number }
  | { kind: 'gone'; reason?: GoneReason }
  /** A join refused: the line holds `maxWaiting` entries; one place opens with the next turn, in about `retryAfterMs`. */
  | { kind: 'full'; retryAfterMs: number };

/** One entry as the shard stores it: waiting, admitted (its turn came), done (outcome) or dropped (expired). */
export type StoredEntry =
  | (KeptPurchase & {
      seq: number;
      state: 'waiting' | 'admitted';
      enqueuedAt: number;
      lastAnswerAt: number;
      pollAfterMs: number;
      tried: boolean;
    })
  | { seq: number; state: 'done'; userId: string; outcome: LineOutcome; endedAt: number }
  | { seq: number; state: 'dropped'; userId: string; limitMs: number; endedAt: number };

/** The line's own counters, stored beside its entries. */
export interface LineMeta {
  nextSeq: number;
  figures: {
    entered: number;
    admitted: number;
    dropped: number;
    closed: number;
    retried: number;
    tokensGranted: number;
    timeInLineSumMs: number;
    timeInLine: number[];
    /** Joins refused because the line was full (absent in rows stored before the cap). */
    refusedFull?: number;
  };
}

/** Upper bounds (ms) of the time-in-line histogram; the last bucket is +Inf. */
export const TIME_IN_LINE_BUCKETS_MS = [100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000] as const;
/** A missed poll deadline is 3 × the pollAfterMs last given (docs/design.md §10). */
export const MISSED_POLLS_TO_DROP = 3;
/** How often (at most) the line is swept of ghosts and compacted. */
export const SWEEP_EVERY_MS = 1_000;
/** How long a finished entry keeps its outcome for repeated polls (and a dropped one its reason). */
export const OUTCOME_KEPT_MS = 60_000;

export interface LineFigures {
  waiting: number;
  oldestWaitMs: number;
  /** Admitted, not yet run (their next poll runs them). */
  turnsPending: number;
  entered: number;
  admitted: number;
  dropped: number;
  /** Waiting or admitted entries resolved by the sale closing (sold out, paused, ended). */
  closed: number;
  /** Turns kept after the origin failed to answer their forward (retried on the next poll). */
  retried: number;
  /** Joins refused because the line held `maxWaiting` entries. */
  refusedFull: number;
  tokensGranted: number;
  /** Cumulative counts per TIME_IN_LINE_BUCKETS_MS bound, then +Inf. */
  timeInLineBuckets: number[];
  timeInLineSumMs: number;
}
