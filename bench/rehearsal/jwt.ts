/**
 * User tokens for the rehearsal: `Authorization: Bearer <JWT HS256>` with `sub` = user id and `exp`
 * (docs/design.md §3), built directly with node:crypto — header.payload.signature in base64url — because a
 * million users means a million signatures and a JWT library's async Web Crypto path costs several
 * times more per token. Tokens are minted when a user arrives and dropped with the user, so memory
 * does not grow with the population.
 */
import { createHmac } from 'node:crypto';

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

/** `shadow`: the shadow claim (`"shadow": true`) that a shadow sale asks for (contract/shadow.ts). */
export function mintUserToken(secret: string, userId: string, expSeconds: number, shadow = false): string {
  const claims = shadow
    ? `{"sub":"${userId}","exp":${expSeconds},"shadow":true}`
    : `{"sub":"${userId}","exp":${expSeconds}}`;
  const payload = Buffer.from(claims).toString('base64url');
  const signingInput = `${HEADER}.${payload}`;
  return `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
}

/** Mints for one secret with a shared expiry (the sale's length plus a margin). */
export function tokenMinter(secret: string, validForSeconds: number, shadow = false): (userId: string) => string {
  const exp = Math.floor(Date.now() / 1000) + validForSeconds;
  return (userId) => mintUserToken(secret, userId, exp, shadow);
}
