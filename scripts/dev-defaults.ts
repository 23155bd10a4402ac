/**
 * Dev defaults shared by `npm run edge`, `npm run token` and `npm start`, so a local stack works
 * with no environment at all. The edge↔origin secret is the origin's own dev default (one source);
 * production refuses dev defaults (origin/platform/config.ts) and takes edge secrets via `wrangler secret put`.
 */
import { DEV_SECRETS } from '../origin/platform/secret-rules.js';

export const EDGE_DEV_DEFAULTS = {
  ORIGIN_URL: 'http://127.0.0.1:3000',
  USER_TOKEN_SECRET: 'dev-user-token-secret',
  TICKET_KEYS: 'k1:dev-ticket-key-one-0000000000',
  EDGE_ORIGIN_SECRET: DEV_SECRETS.EDGE_ORIGIN_SECRET,
} as const;

/** The edge settings that are secrets (wrangler.toml `[secrets] required`): never on a command line. */
export const EDGE_SECRET_NAMES = ['USER_TOKEN_SECRET', 'TICKET_KEYS', 'EDGE_ORIGIN_SECRET'] as const;

/** Edge secrets only some deployments set (edge/optional-secrets.d.ts): passed like the others when set. */
export const OPTIONAL_SECRET_NAMES = ['BOT_CHECK_SECRET'] as const;
