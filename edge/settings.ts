/**
 * Edge settings, read once per isolate from the Worker's environment (vars + secrets) and validated.
 * Every timeout and limit here is a named setting with a documented default.
 */
import { parseTicketKeys, type TicketKey } from './ticket.js';

/** Origin calls give up after this long (ORIGIN_TIMEOUT_MS); kept below 1 s so a dead origin answers fast. */
export const DEFAULT_ORIGIN_TIMEOUT_MS = 800;
const MAX_ORIGIN_TIMEOUT_MS = 950;
/** Number of UserGateDO shards users are spread over (USER_GATE_SHARDS). */
export const DEFAULT_USER_GATE_SHARDS = 16;
/** Lifetime of a purchase ticket (TICKET_TTL_SECONDS). */
export const DEFAULT_TICKET_TTL_SECONDS = 60;

export interface EdgeSettings {
  originUrl: string;
  originTimeoutMs: number;
  userGateShards: number;
  ticketTtlSeconds: number;
  ticketKeys: TicketKey[];
  userTokenSecret: string;
  edgeOriginSecret: string;
}

const cache = new WeakMap<object, EdgeSettings>();

export function settingsOf(env: Env): EdgeSettings {
  let s = cache.get(env);
  if (!s) {
    s = parseSettings(env);
    cache.set(env, s);
  }
  return s;
}

function int(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`edge setting ${name} must be an integer in [${min}, ${max}]`);
  return n;
}

function secret(name: string, raw: string | undefined): string {
  if (!raw) throw new Error(`edge secret ${name} is not set (wrangler secret put ${name})`);
  return raw;
}

export function parseSettings(env: Env): EdgeSettings {
  const originUrl = env.ORIGIN_URL;
  if (!originUrl || !/^https?:\/\//.test(originUrl)) throw new Error('edge setting ORIGIN_URL must be an http(s) URL');
  return {
    originUrl,
    originTimeoutMs: int(
      'ORIGIN_TIMEOUT_MS',
      env.ORIGIN_TIMEOUT_MS,
      DEFAULT_ORIGIN_TIMEOUT_MS,
      10,
      MAX_ORIGIN_TIMEOUT_MS,
    ),
    userGateShards: int('USER_GATE_SHARDS', env.USER_GATE_SHARDS, DEFAULT_USER_GATE_SHARDS, 1, 1024),
    ticketTtlSeconds: int('TICKET_TTL_SECONDS', env.TICKET_TTL_SECONDS, DEFAULT_TICKET_TTL_SECONDS, 5, 3600),
    ticketKeys: parseTicketKeys(secret('TICKET_KEYS', env.TICKET_KEYS)),
    userTokenSecret: secret('USER_TOKEN_SECRET', env.USER_TOKEN_SECRET),
    edgeOriginSecret: secret('EDGE_ORIGIN_SECRET', env.EDGE_ORIGIN_SECRET),
  };
}
