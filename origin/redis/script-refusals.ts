/**
 * A script's refusal (reserve, enter) as the contract's error, by the contract's one table of
 * outcomes (contract/reserve-outcomes.ts), so a purchase, a lottery entry and an operator's action
 * word them alike. Outcomes that are not refusals (a grant, a repeat, the draw's `closed`) stay with
 * their caller.
 */
import { ContractError } from '../../contract/errors.js';
import { REFUSALS, refusalError } from '../../contract/refusals.js';
import { RESERVE_OUTCOMES, type ReserveRefusal } from '../../contract/reserve-outcomes.js';

/** 503 `not_ready`: Redis does not hold the sale (not warmed, or lost and not recovered yet). */
export const notReadyError = (message = REFUSALS.notWarmed.message) =>
  new ContractError('not_ready', message, { retryAfter: REFUSALS.notWarmed.retryAfter });

/** The contract's refusal for a script's refusal outcome. */
export function scriptRefusalError(kind: ReserveRefusal): ContractError {
  return refusalError(RESERVE_OUTCOMES[kind].refusal);
}
