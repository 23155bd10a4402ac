/**
 * Every way a sale turns a buyer away, with its contract code and the one wording both sides use:
 * the edge's early refusals (edge/gates.ts, edge/waiting-room.ts) and the origin's decisions
 * (origin/reservation/reserve.ts, origin/lottery/entry.ts) answer the same refusal with the same
 * message, so a buyer reads the same text whichever layer said no. A refusal whose wait is fixed
 * carries its `retryAfter` (seconds); one whose wait is computed (too early, rate limited, busy)
 * gets it from the caller. The few worded with figures are functions.
 */
import { ContractError, type ErrorCode } from './errors.js';

export interface Refusal {
  readonly code: ErrorCode;
  readonly message: string;
  /** Seconds the client is told to wait, when the wait is always the same. */
  readonly retryAfter?: number;
}

const refusal = <C extends ErrorCode>(code: C, message: string, retryAfter?: number) =>
  (retryAfter === undefined ? { code, message } : { code, message, retryAfter }) satisfies Refusal;

export const REFUSALS = {
  // The sale's window and switches.
  tooEarly: refusal('too_early', 'the sale has not started yet'),
  ended: refusal('ended', 'the sale has ended'),
  paused: refusal('paused', 'the sale is paused, try again later', 5),
  notWarmed: refusal('not_ready', 'the sale is not ready', 5),
  recovering: refusal('not_ready', 'the sale is being recovered after a Redis failover, try again shortly', 1),
  // The stock.
  soldOut: refusal('sold_out', 'sold out'),
  insufficientStock: refusal('insufficient_stock', 'fewer units are left than asked for; ask for fewer'),
  limitExceeded: refusal('limit_exceeded', 'quantity is above the per-user limit of this sale'),
  // Who may buy.
  notEligible: refusal('not_eligible', 'this sale is open to eligible members only'),
  denied: refusal('denied', 'this account may not buy'),
  // Pace.
  rateLimited: refusal('rate_limited', 'too many requests; slow down'),
  admissionBusy: refusal('busy', 'too many buyers right now; try again shortly'),
  borrowing: refusal('busy', 'your purchase is still being decided, try again in a moment', 1),
  drawing: refusal('busy', 'the draw is running; the rest goes on sale in a moment', 1),
  // Answers that prove nothing yet.
  lookupFailed: refusal('unavailable', 'activity lookup failed, try again shortly', 1),
  unconfirmed: refusal('unavailable', 'your purchase could not be confirmed yet; check your reservation shortly', 1),
  unavailable: refusal('unavailable', 'the service is unavailable; try again shortly'),
  // The waiting room (docs/waiting-room.md "Messages").
  pollTooSoon: refusal('rate_limited', 'polled sooner than pollAfterMs; wait before polling again'),
  noSuchPlace: refusal('not_found', 'no such place in line'),
  lineFull: refusal('line_full', 'the waiting line is full; no place was taken; try again later'),
  placeReset: refusal(
    'not_found',
    'this place belongs to a waiting line that no longer exists (the line was reset); buy again',
  ),
} as const;

/** A place in line given up because it was not polled in time. */
export const placeExpired = (seconds: number, missedPolls: number): Refusal =>
  refusal(
    'not_found',
    `this place in line was given up: not polled for ${seconds} s (${missedPolls} × the pollAfterMs it was given); buy again`,
  );

/** A place in line nobody knows (never held, or its outcome no longer kept). */
export const placeUnknown = (keptSeconds: number): Refusal =>
  refusal('not_found', `no such place in line (unknown, or finished more than ${keptSeconds} s ago); buy again`);

/** How the sale's closing is worded for a buyer whose place in line was waiting when it happened. */
export const WHILE_WAITING: Partial<Record<ErrorCode, Refusal>> = {
  sold_out: refusal('sold_out', 'sold out: the units ran out before this place in line could buy'),
  paused: refusal('paused', 'the sale was paused while this place waited; buy again when it reopens', 5),
  ended: refusal('ended', 'the sale ended while this place waited'),
};

/** A new ContractError for `r` (the origin's way; the edge shares instances: edge/refusal.ts). */
export function refusalError(r: Refusal, options: { retryAfter?: number; cause?: unknown } = {}): ContractError {
  const retryAfter = options.retryAfter ?? r.retryAfter;
  return new ContractError(r.code, r.message, {
    ...(retryAfter === undefined ? {} : { retryAfter }),
    ...(options.cause === undefined ? {} : { cause: options.cause }),
  });
}
