/**
 * The edge's refusals as shared ContractError instances: a doomed click (sold out, a replayed
 * forged ticket or token, a remembered rate limit) throws the one instance of its (code, message,
 * retryAfter) instead of building an Error per click: under a flood of doomed clicks, building the error would
 * be most of the isolate's own work per click.
 * Safe to share: the error handler only reads an error's code, message and retryAfter, and a
 * ContractError at the edge carries no stack (edge/errors.ts). Bounded: a countdown's retryAfter
 * or an activity id in a message makes new keys, so a full map is cleared (forgetting only costs a
 * new instance).
 */
import { ContractError, type ErrorCode, type Refusal } from '../contract/index.js';

const MAX_SHARED_REFUSALS = 512;
const shared = new Map<string, ContractError>();

export function refusal(code: ErrorCode, message: string, retryAfter?: number): ContractError {
  const key = retryAfter === undefined ? `${code}\n${message}` : `${code}\n${message}\n${retryAfter}`;
  let err = shared.get(key);
  if (err === undefined) {
    err = new ContractError(code, message, retryAfter === undefined ? {} : { retryAfter });
    if (shared.size >= MAX_SHARED_REFUSALS) shared.clear();
    shared.set(key, err);
  }
  return err;
}

/** The shared instance of one of the contract's refusals (contract/refusals.ts); `retryAfter` overrides its own. */
export function refuse(r: Refusal, retryAfter: number | undefined = r.retryAfter): ContractError {
  return refusal(r.code, r.message, retryAfter);
}
