/**
 * The rules the origin's secrets and admin operators follow (origin/platform/config.ts applies them at
 * start): the public dev defaults and where they may be used, the length every real secret needs,
 * and the `ADMIN_TOKENS` list of named operators.
 */

export const DEV_SECRETS = {
  ADMIN_TOKEN: 'dev-admin-token',
  EDGE_ORIGIN_SECRET: 'dev-edge-origin-secret',
  PAYMENT_WEBHOOK_SECRET: 'dev-payment-webhook-secret',
  DRAW_SECRET: 'dev-draw-secret-not-for-sales',
} as const;

/** Every secret setting: wherever real secrets are required (production, or a non-loopback HOST
 * without ALLOW_DEV_SECRETS=1) each set one must be at least this long — ADMIN_TOKENS' too. */
export const SECRET_NAMES = [
  'ADMIN_TOKEN',
  'EDGE_ORIGIN_SECRET',
  'PAYMENT_WEBHOOK_SECRET',
  'METRICS_TOKEN',
  'ORDER_EVENTS_SECRET',
  'DRAW_SECRET',
] as const;
/** 32 characters: a random hex token of this length holds 128 bits, beyond any online guessing; an
 * 8-character one falls to a determined script. The same floor for every secret, so one rule. */
export const MIN_PRODUCTION_SECRET_LENGTH = 32;

/** The operator name recorded for a change made with the shared ADMIN_TOKEN (it names nobody). */
export const SHARED_ADMIN_NAME = 'admin';
/** An operator's name in ADMIN_TOKENS: what `actor` columns and change log lines record. */
const OPERATOR_NAME = /^[A-Za-z0-9_.@+-]{1,64}$/;

export interface AdminOperator {
  name: string;
  token: string;
}

/** `name:token,name:token` → operators; a ConfigError message on a malformed list. */
export function parseOperators(list: string): AdminOperator[] | string {
  const operators: AdminOperator[] = [];
  for (const entry of list.split(',')) {
    const colon = entry.indexOf(':');
    const name = entry.slice(0, colon).trim();
    const token = entry.slice(colon + 1).trim();
    if (colon < 0 || !OPERATOR_NAME.test(name)) return 'each entry must be name:token (name: 1-64 of [A-Za-z0-9_.@+-])';
    if (name === SHARED_ADMIN_NAME) return `"${SHARED_ADMIN_NAME}" is the shared ADMIN_TOKEN's name; pick another`;
    if (token.length < 16) return `${name}'s token must be at least 16 characters`;
    if (operators.some((o) => o.name === name)) return `${name} is listed twice`;
    if (operators.some((o) => o.token === token)) return `${name}'s token is also another operator's`;
    operators.push({ name, token });
  }
  return operators;
}

/** Loopback addresses: a listener there is reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
