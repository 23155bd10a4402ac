/**
 * The one translation of a script's refusal (reserve, enter) into the contract's wording
 * (contract/refusals.ts), so a purchase, a lottery entry and an operator's action word them alike.
 * Outcomes that are not refusals (a grant, a repeat, the draw's `closed`) stay with their caller.
 */
import { ContractError } from '../../contract/errors.js';
import { REFUSALS, refusalError, type Refusal } from '../../contract/refusals.js';

export type ScriptRefusal =
  | 'sold_out'
  | 'insufficient_stock'
  | 'limit_exceeded'
  | 'paused'
  | 'ended'
  | 'not_warmed'
  | 'denied'
  | 'not_eligible'
  | 'busy';

const WORDING: Record<ScriptRefusal, Refusal> = {
  sold_out: REFUSALS.soldOut,
  // Some units remain: smaller requests still succeed (docs/design.md §10).
  insufficient_stock: REFUSALS.insufficientStock,
  limit_exceeded: REFUSALS.limitExceeded,
  paused: REFUSALS.paused,
  ended: REFUSALS.ended,
  not_warmed: REFUSALS.notWarmed,
  denied: REFUSALS.denied,
  not_eligible: REFUSALS.notEligible,
  // Stock buckets: this user's own borrow from another bucket is still in flight.
  busy: REFUSALS.borrowing,
};

/** 503 `not_ready`: Redis does not hold the sale (not warmed, or lost and not recovered yet). */
export const notReadyError = (message = REFUSALS.notWarmed.message) =>
  new ContractError('not_ready', message, { retryAfter: REFUSALS.notWarmed.retryAfter });

/** The contract's refusal for a script's refusal outcome. */
export function scriptRefusalError(kind: ScriptRefusal): ContractError {
  return refusalError(WORDING[kind]);
}
