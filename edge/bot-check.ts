/**
 * Bot check at ticket issuance (docs/design.md §10). With BOT_CHECK_URL set, a ticket needs the header
 * `x-challenge-token` (the widget's answer, e.g. Cloudflare Turnstile's), verified by a
 * siteverify-style POST: form fields `secret` and `response`, answer `{"success": true|false}`.
 *   missing token, or success false → 403 `challenge_failed`;
 *   verifier unreachable, slower than BOT_CHECK_TIMEOUT_MS, non-2xx or not that JSON → 503
 *   `unavailable`: fail closed — an outage of the verifier must not open the door to bots.
 * It runs last before a ticket is signed (after the JWT, the sale state and the user's gate), so
 * doomed and rate-limited clicks never cost a verifier call.
 */
import { ContractError } from '../contract/index.js';
import type { EdgeSettings } from './settings.js';

export const CHALLENGE_HEADER = 'x-challenge-token';
/** Turnstile tokens are up to 2048 characters; anything longer is not a token. */
const MAX_TOKEN_LENGTH = 2048;

export async function verifyChallenge(
  check: NonNullable<EdgeSettings['botCheck']>,
  token: string | undefined,
): Promise<void> {
  if (!token || token.length > MAX_TOKEN_LENGTH)
    throw new ContractError('challenge_failed', `a ${CHALLENGE_HEADER} header with the challenge answer is required`);
  let answer: unknown;
  try {
    const res = await fetch(check.url, {
      method: 'POST',
      body: new URLSearchParams({ secret: check.secret, response: token }),
      signal: AbortSignal.timeout(check.timeoutMs),
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`verifier answered ${res.status}`);
    }
    answer = await res.json();
  } catch (err) {
    throw new ContractError('unavailable', 'the bot check is unavailable, try again shortly', {
      retryAfter: 1,
      cause: err,
    });
  }
  const success = (answer as { success?: unknown } | null)?.success;
  if (success === true) return;
  if (success === false) throw new ContractError('challenge_failed', 'the challenge was not passed; try again');
  throw new ContractError('unavailable', 'the bot check answered something unexpected', { retryAfter: 1 });
}
