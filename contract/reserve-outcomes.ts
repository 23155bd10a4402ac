/**
 * What a reservation request comes to — a purchase, a waiting-room turn, a borrow across buckets, a
 * lottery draw's winner alike — and the one table from each outcome to its answer: the HTTP status,
 * and for a refusal its contract refusal (code and wording; the code's status is ERROR_STATUS's). The
 * origin answers by it (origin/redis/script-refusals.ts, origin/reservation/reserve-answer.ts) and the
 * edge passes on exactly the codes it and the origin's other answers carry (ORIGIN_ANSWER_CODES).
 */
import { ERROR_STATUS, type ErrorCode } from './errors.js';
import { REFUSALS, type Refusal } from './refusals.js';

const refused = <R extends Refusal>(refusal: R) => ({ status: ERROR_STATUS[refusal.code], refusal });

export const RESERVE_OUTCOMES = {
  /** Granted now: the reservation is queued for settlement. */
  reserved: { status: 202 },
  /** The user already holds the reservation: where it stands now. */
  repeat: { status: 200 },
  sold_out: refused(REFUSALS.soldOut),
  // Some units remain: smaller requests still succeed (docs/design.md §10).
  insufficient_stock: refused(REFUSALS.insufficientStock),
  limit_exceeded: refused(REFUSALS.limitExceeded),
  paused: refused(REFUSALS.paused),
  ended: refused(REFUSALS.ended),
  not_warmed: refused(REFUSALS.notWarmed),
  denied: refused(REFUSALS.denied),
  not_eligible: refused(REFUSALS.notEligible),
  // Stock buckets: this user's own borrow from another bucket is still in flight.
  busy: refused(REFUSALS.borrowing),
  // Granted on the primary but not seen on enough replicas in time: not promised.
  unconfirmed: refused(REFUSALS.unconfirmed),
} as const;

type ReserveOutcomeKind = keyof typeof RESERVE_OUTCOMES;
/** The outcomes that turn the request away. */
export type ReserveRefusal = {
  [K in ReserveOutcomeKind]: (typeof RESERVE_OUTCOMES)[K] extends { refusal: Refusal } ? K : never;
}[ReserveOutcomeKind];

/**
 * The error codes the origin's internal API answers the edge with, which the edge passes on to the
 * client unchanged (docs/design.md §9); any other code fails closed as 503 `unavailable`. The reserve
 * outcomes' codes, and those of the origin's answers outside the decision: a body it refuses, a
 * reservation it does not know, a sale not open yet or being recovered, a draw running, a shadow
 * token on the wrong sale.
 */
export const ORIGIN_ANSWER_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  ...Object.values(RESERVE_OUTCOMES).flatMap((o) => ('refusal' in o ? [o.refusal.code] : [])),
  'bad_request',
  'forbidden',
  'not_found',
  'too_early',
  'not_ready',
  'busy',
  'shadow_mismatch',
]);

/**
 * Codes among the origin's answers that say "not for this request" rather than "no": a sale not warmed
 * or being recovered, a borrow still in flight, a grant not yet confirmed or the origin down (not
 * ready, busy, unavailable), the edge's own signature refused (a deployment fault, not the buyer's),
 * and a reservation lookup's not found (never a purchase's answer).
 */
const NOT_FINAL: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'not_ready',
  'busy',
  'unavailable',
  'forbidden',
  'not_found',
]);

/**
 * The origin's answers that end a purchase for good: asked again, the same purchase meets the same
 * answer. The edge's waiting room ends a kept turn with them (the buyer is told, the line moves on);
 * any other answer leaves the turn for the buyer's next poll, so a hiccup does not cost a place won
 * by waiting. `denied` and `not_eligible` are final too: the origin applies the rules in force at the
 * turn, and a turn kept for them would be asked again on every poll and never pass to the next.
 */
export const FINAL_ORIGIN_ANSWERS: ReadonlySet<ErrorCode> = new Set(
  [...ORIGIN_ANSWER_CODES].filter((code) => !NOT_FINAL.has(code)),
);
