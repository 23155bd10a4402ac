/**
 * Who may buy a members-only sale (`eligibility` in the activity config): one rule for the edge's
 * early refusal and for the origin's decision, which sees the claims the edge verified in the
 * user's JWT and forwarded with the signed reserve request (`claims`).
 */
import { z } from 'zod';
import type { Eligibility } from './activity.js';
import { SHADOW_CLAIM, SHADOW_FORWARDED, isShadowToken } from './shadow.js';

/** A JWT claim's value as the rule reads it: a string, or an array of strings. */
export type Claims = Record<string, string | string[]>;

/** At most this many claims are forwarded with a purchase (a JWT with more keeps the first ones). */
export const MAX_FORWARDED_CLAIMS = 16;
/** Registered JWT claims carry no membership; they are not forwarded. */
const REGISTERED = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti']);
const CLAIM_NAME = /^[A-Za-z0-9_:.-]{1,64}$/;
const claimValue = z.string().max(100);

export const claimsSchema = z
  .record(
    z.string().regex(CLAIM_NAME, 'claim names must be 1-64 characters of [A-Za-z0-9_:.-]'),
    z.union([claimValue, z.array(claimValue).max(100)]),
  )
  .refine((c) => Object.keys(c).length <= MAX_FORWARDED_CLAIMS, `at most ${MAX_FORWARDED_CLAIMS} claims`);

/**
 * The claims of a verified JWT payload worth forwarding: string or string-array values, bounded.
 * The shadow claim (contract/shadow.ts) goes first, as `shadow: "true"`, only for a shadow token
 * (`"shadow": true`); a token's own `shadow` claim of any other value is never forwarded.
 */
export function forwardedClaims(payload: Record<string, unknown> | undefined): Claims | undefined {
  if (!payload) return undefined;
  const out: Claims = {};
  let n = 0;
  if (isShadowToken(payload)) {
    out[SHADOW_CLAIM] = SHADOW_FORWARDED;
    n++;
  }
  for (const [name, value] of Object.entries(payload)) {
    if (n >= MAX_FORWARDED_CLAIMS) break;
    if (REGISTERED.has(name) || name === SHADOW_CLAIM || !CLAIM_NAME.test(name)) continue;
    if (typeof value === 'string' && value.length <= 100) out[name] = value;
    else if (
      Array.isArray(value) &&
      value.length <= 100 &&
      value.every((v) => typeof v === 'string' && v.length <= 100)
    )
      out[name] = value as string[];
    else continue;
    n++;
  }
  return n === 0 ? undefined : out;
}

/** True when the sale has no rule, or the claims name one of the rule's values. */
export function isEligible(rule: Eligibility | null | undefined, claims: Record<string, unknown> | undefined): boolean {
  if (!rule) return true;
  const value = claims?.[rule.claim];
  const held = Array.isArray(value) ? value : [value];
  return held.some((v) => typeof v === 'string' && rule.values.includes(v));
}
