/**
 * The one translation of a script's refusal (reserve, enter) into the contract's error, so a
 * purchase, a lottery entry and an operator's action word them alike. Outcomes that are not
 * refusals (a grant, a repeat, the draw's `closed`) stay with their caller.
 */
import { ContractError } from '../../contract/errors.js';

/** Seconds a caller is told to wait when the sale is paused or Redis does not hold it (yet). */
export const NOT_SELLING_RETRY_AFTER_S = 5;

export type Refusal =
  | 'sold_out'
  | 'insufficient_stock'
  | 'limit_exceeded'
  | 'paused'
  | 'ended'
  | 'not_warmed'
  | 'denied'
  | 'not_eligible'
  | 'busy';

/** 503 `not_ready`: Redis does not hold the sale (not warmed, or lost and not recovered yet). */
export const notReadyError = (message = 'the sale is not ready') =>
  new ContractError('not_ready', message, { retryAfter: NOT_SELLING_RETRY_AFTER_S });

/** The refusals of the access rules, worded as the edge words its early ones (edge/gates.ts). */
export const deniedError = () => new ContractError('denied', 'this account may not buy');
export const notEligibleError = () => new ContractError('not_eligible', 'this sale is open to eligible members only');

export function refusalError(kind: Refusal): ContractError {
  switch (kind) {
    case 'sold_out':
      return new ContractError('sold_out', 'sold out');
    case 'insufficient_stock':
      // Some units remain: smaller requests still succeed (docs/design.md §10).
      return new ContractError('insufficient_stock', 'fewer units are left than asked for; ask for fewer');
    case 'limit_exceeded':
      return new ContractError('limit_exceeded', 'quantity is above the per-user limit of this sale');
    case 'paused':
      return new ContractError('paused', 'the sale is paused, try again later', {
        retryAfter: NOT_SELLING_RETRY_AFTER_S,
      });
    case 'ended':
      return new ContractError('ended', 'the sale has ended');
    case 'not_warmed':
      return notReadyError();
    case 'denied':
      return deniedError();
    case 'not_eligible':
      return notEligibleError();
    case 'busy':
      // Stock buckets: this user's own borrow from another bucket is still in flight.
      return new ContractError('busy', 'your purchase is still being decided, try again in a moment', {
        retryAfter: 1,
      });
  }
}
