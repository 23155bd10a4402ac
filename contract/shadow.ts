/**
 * Shadow traffic (docs/rehearsal.md "A shadow rehearsal on the production stack"): a rehearsal on the
 * production stack acts on a shadow sale (`shadow: true` in its config) with user tokens that carry
 * the shadow claim, signed with the real USER_TOKEN_SECRET. One rule for the edge and the origin:
 * a shadow sale takes only shadow tokens, a real sale never takes one — 403 `shadow_mismatch`.
 *
 * In the JWT the claim is `"shadow": true` (a boolean: a shop's string claim of that name never
 * counts). The edge forwards it in the signed reserve request as the forwarded claim `shadow: "true"`
 * (contract/eligibility.ts `forwardedClaims`), so a waiting-room turn carries it too, and the
 * origin checks it again.
 */
import type { Refusal } from './refusals.js';

/** The JWT claim, and the name it is forwarded under. */
export const SHADOW_CLAIM = 'shadow';
/** The forwarded claim's value (forwarded claims are strings). */
export const SHADOW_FORWARDED = 'true';

/** Whether a verified JWT payload is a shadow token: `"shadow": true`, the boolean. */
export function isShadowToken(payload: Record<string, unknown> | undefined): boolean {
  return payload?.[SHADOW_CLAIM] === true;
}

/** Whether the claims the edge forwarded mark shadow traffic. */
export function isShadowForwarded(claims: Record<string, unknown> | undefined): boolean {
  return claims?.[SHADOW_CLAIM] === SHADOW_FORWARDED;
}

export const SHADOW_REFUSALS = {
  realTokenOnShadowSale: {
    code: 'shadow_mismatch',
    message: 'this sale is a rehearsal (a shadow sale): only rehearsal tokens with the shadow claim may act on it',
  },
  shadowTokenOnRealSale: {
    code: 'shadow_mismatch',
    message: 'a rehearsal token (shadow claim) may not act on a real sale',
  },
} as const satisfies Record<string, Refusal>;

/** The refusal when the token's kind does not match the sale's, or null when it does. */
export function shadowMismatch(saleIsShadow: boolean, tokenIsShadow: boolean): Refusal | null {
  if (saleIsShadow === tokenIsShadow) return null;
  return saleIsShadow ? SHADOW_REFUSALS.realTokenOnShadowSale : SHADOW_REFUSALS.shadowTokenOnRealSale;
}
