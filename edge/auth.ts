/**
 * The user's identity: `Authorization: Bearer <JWT HS256>` signed with USER_TOKEN_SECRET, with
 * `sub` = user id (a contract id) and `exp`. Anything else is 401 `unauthenticated`.
 *
 * Rules: only compact JWTs of unpadded base64url (RFC 7515 §2); `iat` / `nbf` / `exp`
 * with JWT_LEEWAY_SECONDS of clock skew; a lifetime (`exp − iat`, or `exp − now` without `iat`) of
 * at most JWT_MAX_LIFETIME_SECONDS, so a leaked long-lived token is refused; `iss` / `aud` checked
 * when JWT_ISSUER / JWT_AUDIENCE are set. Signature and iss/aud by hono/jwt; times here, because
 * hono/jwt has no leeway.
 */
import { verify } from 'hono/jwt';
import { ContractError, hmacKey, isId } from '../contract/index.js';
import type { EdgeContext } from './context.js';
import { refusal } from './refusal.js';
import { settingsOf, type EdgeSettings } from './settings.js';
import { TtlCache } from './ttl-cache.js';

/**
 * Isolate-memory cache of tokens already verified (the whole token string, signature included, is
 * the key): a user retrying a doomed click costs a map lookup, not an HMAC. Entries live at most
 * VERIFIED_TOKEN_TTL_MS and never past the token's own `exp` (+ leeway). Settings are fixed per deployment.
 */
const VERIFIED_TOKEN_TTL_MS = 60_000;
const MAX_VERIFIED_TOKENS = 50_000;
const MAX_TOKEN_LENGTH = 4096;
const verifiedTokens = new TtlCache<{ userId: string; claims: Record<string, unknown> }>(MAX_VERIFIED_TOKENS);

/**
 * Tokens already refused, with the refusal's message: a client retrying with the same bad token (a
 * forged or expired one) costs a map lookup, not an HMAC. Only refusals no later moment can undo
 * are kept — never "not valid yet" — so the answer is the one verification would give.
 */
const REFUSED_TOKEN_TTL_MS = 60_000;
const MAX_REFUSED_TOKENS = 10_000;
const refusedTokens = new TtlCache<string>(MAX_REFUSED_TOKENS);
const NOT_YET_VALID = 'the bearer token is not valid yet';

/** header.payload.signature, each unpadded base64url: no `=`, no `+` or `/`, no whitespace. */
const COMPACT_JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

function invalid(message = 'the bearer token is not valid'): ContractError {
  return refusal('unauthenticated', message);
}

/**
 * The user id of the request's bearer token. A token this isolate already verified or refused is
 * answered synchronously (no promise, no rejected-promise chain for a replayed bad token); only a
 * new token returns the promise of its verification.
 */
export function requireUser(c: EdgeContext): string | Promise<string> {
  const header = c.req.header('authorization') ?? '';
  const token = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
  if (!token || token.length > MAX_TOKEN_LENGTH) throw invalid('a bearer token is required');
  const now = Date.now();
  const known = verifiedTokens.get(token, now);
  if (known !== undefined) {
    c.set('userId', known.userId);
    c.set('claims', known.claims);
    return known.userId;
  }
  const refused = refusedTokens.get(token, now);
  if (refused !== undefined) throw invalid(refused);
  return verifyAndRemember(c, token, now);
}

async function verifyAndRemember(c: EdgeContext, token: string, now: number): Promise<string> {
  const settings = settingsOf(c.env); // outside the try: a missing secret is our 500, not the user's 401
  let verified;
  try {
    verified = await verifyUserToken(token, settings, now);
  } catch (err) {
    // A refusal that time cannot undo (bad signature, expired, too long-lived, no user) is remembered.
    if (err instanceof ContractError && err.message !== NOT_YET_VALID)
      refusedTokens.set(token, err.message, now + REFUSED_TOKEN_TTL_MS, now);
    throw err;
  }
  const { userId, expiresAt, claims } = verified;
  verifiedTokens.set(token, { userId, claims }, Math.min(expiresAt, now + VERIFIED_TOKEN_TTL_MS), now);
  c.set('userId', userId);
  c.set('claims', claims);
  return userId;
}

/** The user id of a valid token, and until when (ms) it is valid; 401 otherwise. */
export async function verifyUserToken(
  token: string,
  s: Pick<EdgeSettings, 'userTokenSecret' | 'jwtLeewaySeconds' | 'jwtMaxLifetimeSeconds' | 'jwtIssuer' | 'jwtAudience'>,
  nowMs: number,
): Promise<{ userId: string; expiresAt: number; claims: Record<string, unknown> }> {
  if (!COMPACT_JWT.test(token)) throw invalid();
  let payload: Record<string, unknown>;
  try {
    // The imported key, not the secret: hono/jwt would import the secret again for every token.
    payload = await verify(token, await hmacKey(s.userTokenSecret), {
      alg: 'HS256',
      exp: false,
      nbf: false,
      iat: false,
      ...(s.jwtIssuer ? { iss: s.jwtIssuer } : {}),
      ...(s.jwtAudience ? { aud: s.jwtAudience } : {}),
    });
  } catch {
    throw invalid();
  }
  const now = nowMs / 1000;
  const leeway = s.jwtLeewaySeconds;
  const { exp, nbf, iat, sub } = payload;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw invalid('the bearer token has no expiry');
  if (exp + leeway <= now) throw invalid('the bearer token has expired');
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf - leeway > now)) throw invalid(NOT_YET_VALID);
  if (iat !== undefined && (typeof iat !== 'number' || iat - leeway > now)) throw invalid(NOT_YET_VALID);
  const issuedAt = typeof iat === 'number' ? iat : now;
  if (exp - issuedAt > s.jwtMaxLifetimeSeconds) throw invalid('the bearer token lives too long');
  if (!isId(sub)) throw invalid('the bearer token names no valid user');
  return { userId: sub, expiresAt: (exp + leeway) * 1000, claims: payload };
}
