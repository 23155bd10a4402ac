/**
 * The user's identity: `Authorization: Bearer <JWT HS256>` signed with USER_TOKEN_SECRET, with
 * `sub` = user id (a contract id) and `exp`. Anything else is 401 `unauthenticated`.
 */
import { verify } from 'hono/jwt';
import { ContractError, isId } from '../contract/index.js';
import type { EdgeContext } from './context.js';
import { settingsOf } from './settings.js';

/**
 * Isolate-memory cache of tokens already verified (the whole token string, signature included, is
 * the key): a user retrying a doomed click costs a map lookup, not an HMAC. Entries live at most
 * VERIFIED_TOKEN_TTL_MS and never past the token's own `exp`. The secret is fixed per deployment.
 */
const VERIFIED_TOKEN_TTL_MS = 60_000;
const MAX_VERIFIED_TOKENS = 50_000;
const verifiedTokens = new Map<string, { userId: string; expiresAt: number }>();

export async function requireUser(c: EdgeContext): Promise<string> {
  const header = c.req.header('authorization') ?? '';
  const token = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
  if (!token || token.length > 4096) throw new ContractError('unauthenticated', 'a bearer token is required');
  const known = verifiedTokens.get(token);
  if (known && known.expiresAt > Date.now()) {
    c.set('userId', known.userId);
    return known.userId;
  }
  const secret = settingsOf(c.env).userTokenSecret; // outside the try: a missing secret is our 500, not the user's 401
  let payload: Record<string, unknown>;
  try {
    payload = await verify(token, secret, 'HS256');
  } catch {
    throw new ContractError('unauthenticated', 'the bearer token is not valid');
  }
  if (typeof payload.exp !== 'number') throw new ContractError('unauthenticated', 'the bearer token has no expiry');
  if (!isId(payload.sub)) throw new ContractError('unauthenticated', 'the bearer token names no valid user');
  if (verifiedTokens.size >= MAX_VERIFIED_TOKENS) verifiedTokens.clear();
  verifiedTokens.set(token, {
    userId: payload.sub,
    expiresAt: Math.min(payload.exp * 1000, Date.now() + VERIFIED_TOKEN_TTL_MS),
  });
  c.set('userId', payload.sub);
  return payload.sub;
}
