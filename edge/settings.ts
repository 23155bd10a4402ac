/**
 * Edge settings, read once per isolate from the Worker's environment (vars + secrets) and validated.
 * Every timeout and limit here is a named setting with a documented default.
 */
import { parseTicketKeys, type TicketKey } from './ticket.js';

/** Origin calls give up after this long (ORIGIN_TIMEOUT_MS); kept below 1 s so a dead origin answers fast. */
export const DEFAULT_ORIGIN_TIMEOUT_MS = 800;
/** The longest ORIGIN_TIMEOUT_MS accepted: room for a far or loaded origin, still short of a hang. */
const MAX_ORIGIN_TIMEOUT_MS = 10_000;
/** Number of UserGateDO shards users are spread over (USER_GATE_SHARDS). */
export const DEFAULT_USER_GATE_SHARDS = 16;
/** Lifetime of a purchase ticket (TICKET_TTL_SECONDS). */
export const DEFAULT_TICKET_TTL_SECONDS = 60;

/** Largest public request body (purchase, tickets, …) in bytes (MAX_BODY_BYTES); larger → 413. */
export const DEFAULT_MAX_BODY_BYTES = 1024;
/** Largest origin→edge push (`/internal/*`) in bytes (MAX_INTERNAL_BODY_BYTES): the live list of ~10k ids fits. */
export const DEFAULT_MAX_INTERNAL_BODY_BYTES = 256 * 1024;
/** A request body must have fully arrived within this long (BODY_READ_TIMEOUT_MS), else 400. */
export const DEFAULT_BODY_READ_TIMEOUT_MS = 2_000;
/**
 * A chunked body found over its limit is read on and discarded for at most this long before the
 * 413 goes out (BODY_DRAIN_MS; edge/middleware/body-limit.ts says why); 0 = answer at once.
 */
export const DEFAULT_BODY_DRAIN_MS = 10_000;
/** How often an ActivityDO refetches its snapshot from the origin, healing a missed push (ACTIVITY_REFRESH_MS). */
export const DEFAULT_ACTIVITY_REFRESH_MS = 2_000;
/** How long an isolate trusts its copy of the live-activity list (LIVE_LIST_TTL_MS). */
export const DEFAULT_LIVE_LIST_TTL_MS = 2_000;
/** Clock-skew leeway for the JWT's iat / nbf / exp (JWT_LEEWAY_SECONDS). */
export const DEFAULT_JWT_LEEWAY_SECONDS = 30;
/** Longest accepted JWT lifetime, exp − iat (or exp − now without iat) (JWT_MAX_LIFETIME_SECONDS). */
export const DEFAULT_JWT_MAX_LIFETIME_SECONDS = 86_400;
/** One doomed refusal in this many gets a log line; all are counted (REFUSAL_LOG_SAMPLE). */
export const DEFAULT_REFUSAL_LOG_SAMPLE = 1_000;
/** Waiting room: the shortest pollAfterMs a waiting buyer is given (WAITING_POLL_MIN_MS). */
export const DEFAULT_WAITING_POLL_MIN_MS = 1_000;
/** Waiting room: polls per second one admission shard's line aims to stay under (WAITING_POLLS_PER_SEC). */
export const DEFAULT_WAITING_POLLS_PER_SEC = 500;
/**
 * Waiting room: the longest pollAfterMs a waiting buyer is given (WAITING_POLL_MAX_MS), so a place
 * nobody polls is dropped within 3 × this, wherever it stands in the line.
 */
export const DEFAULT_WAITING_POLL_MAX_MS = 60_000;
/**
 * Waiting room: the most buyers one admission shard's line holds (WAITING_LINE_MAX); a join beyond it
 * is 503 `line_full`. Bounds a shard's memory (~200 B a place) and storage (~1 KB a place).
 */
export const DEFAULT_WAITING_LINE_MAX = 10_000;

/** Lottery entrant list: the largest page a client may ask for (DRAW_ENTRANTS_PAGE_MAX); larger → 400. */
export const DEFAULT_DRAW_ENTRANTS_PAGE_MAX = 1_000;
/** Lottery entrant list: pages per second one client (cf-connecting-ip) may fetch past the edge's cache (DRAW_ENTRANTS_PER_SEC). */
export const DEFAULT_DRAW_ENTRANTS_PER_SEC = 5;
/** How often an isolate hands its figures' growth to EdgeFiguresDO (EDGE_FIGURES_FLUSH_MS). */
export const DEFAULT_EDGE_FIGURES_FLUSH_MS = 1_000;
/** Waiting room: changed entries of a shard's line are written at most this often (WAITING_LINE_FLUSH_MS). */
export const DEFAULT_WAITING_LINE_FLUSH_MS = 200;
/**
 * Waiting room: when a new place is written (WAITING_JOIN_WRITE): "sync" before the buyer's answer
 * (no acknowledged place is lost in a crash), or "batched" with the next flush (cheaper; a crash loses
 * the places of the last WAITING_LINE_FLUSH_MS).
 */
export const DEFAULT_WAITING_JOIN_WRITE = 'sync';
/**
 * Waiting room, "sync" joins: a join waits this long for others to share its write (WAITING_JOIN_GROUP_MS)
 * — a group commit; 0 = the next turn of the event loop.
 */
export const DEFAULT_WAITING_JOIN_GROUP_MS = 2;
const JOIN_WRITES = ['sync', 'batched'] as const;

/** The bot-check verifier must answer within this long (BOT_CHECK_TIMEOUT_MS), else 503 (fail closed). */
export const DEFAULT_BOT_CHECK_TIMEOUT_MS = 2_000;

export interface EdgeSettings {
  originUrl: string;
  originTimeoutMs: number;
  userGateShards: number;
  ticketTtlSeconds: number;
  ticketKeys: TicketKey[];
  userTokenSecret: string;
  edgeOriginSecret: string;
  maxBodyBytes: number;
  maxInternalBodyBytes: number;
  bodyReadTimeoutMs: number;
  bodyDrainMs: number;
  activityRefreshMs: number;
  liveListTtlMs: number;
  jwtLeewaySeconds: number;
  jwtMaxLifetimeSeconds: number;
  /** When set, a JWT must carry exactly this `iss` (JWT_ISSUER). */
  jwtIssuer?: string;
  /** When set, a JWT's `aud` must name it (JWT_AUDIENCE). */
  jwtAudience?: string;
  refusalLogSample: number;
  figuresFlushMs: number;
  /** Bot check at ticket issuance (BOT_CHECK_URL + secret BOT_CHECK_SECRET); absent = off. */
  botCheck?: { url: string; secret: string; timeoutMs: number };
  waitingPollMinMs: number;
  waitingPollBudgetPerSec: number;
  waitingPollMaxMs: number;
  waitingLineMax: number;
  drawEntrantsPageMax: number;
  drawEntrantsPerSec: number;
  waitingFlushMs: number;
  waitingJoinWrite: (typeof JOIN_WRITES)[number];
  waitingJoinGroupMs: number;
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
    maxBodyBytes: int('MAX_BODY_BYTES', env.MAX_BODY_BYTES, DEFAULT_MAX_BODY_BYTES, 64, 65_536),
    maxInternalBodyBytes: int(
      'MAX_INTERNAL_BODY_BYTES',
      env.MAX_INTERNAL_BODY_BYTES,
      DEFAULT_MAX_INTERNAL_BODY_BYTES,
      1024,
      4 * 1024 * 1024,
    ),
    bodyReadTimeoutMs: int('BODY_READ_TIMEOUT_MS', env.BODY_READ_TIMEOUT_MS, DEFAULT_BODY_READ_TIMEOUT_MS, 50, 30_000),
    bodyDrainMs: int('BODY_DRAIN_MS', env.BODY_DRAIN_MS, DEFAULT_BODY_DRAIN_MS, 0, 60_000),
    activityRefreshMs: int('ACTIVITY_REFRESH_MS', env.ACTIVITY_REFRESH_MS, DEFAULT_ACTIVITY_REFRESH_MS, 200, 3_000),
    liveListTtlMs: int('LIVE_LIST_TTL_MS', env.LIVE_LIST_TTL_MS, DEFAULT_LIVE_LIST_TTL_MS, 100, 10_000),
    jwtLeewaySeconds: int('JWT_LEEWAY_SECONDS', env.JWT_LEEWAY_SECONDS, DEFAULT_JWT_LEEWAY_SECONDS, 0, 300),
    jwtMaxLifetimeSeconds: int(
      'JWT_MAX_LIFETIME_SECONDS',
      env.JWT_MAX_LIFETIME_SECONDS,
      DEFAULT_JWT_MAX_LIFETIME_SECONDS,
      60,
      30 * 86_400,
    ),
    jwtIssuer: env.JWT_ISSUER || undefined,
    jwtAudience: env.JWT_AUDIENCE || undefined,
    refusalLogSample: int('REFUSAL_LOG_SAMPLE', env.REFUSAL_LOG_SAMPLE, DEFAULT_REFUSAL_LOG_SAMPLE, 1, 1_000_000),
    figuresFlushMs: int('EDGE_FIGURES_FLUSH_MS', env.EDGE_FIGURES_FLUSH_MS, DEFAULT_EDGE_FIGURES_FLUSH_MS, 100, 60_000),
    waitingPollMinMs: int('WAITING_POLL_MIN_MS', env.WAITING_POLL_MIN_MS, DEFAULT_WAITING_POLL_MIN_MS, 50, 60_000),
    waitingPollBudgetPerSec: int(
      'WAITING_POLLS_PER_SEC',
      env.WAITING_POLLS_PER_SEC,
      DEFAULT_WAITING_POLLS_PER_SEC,
      10,
      10_000,
    ),
    waitingPollMaxMs: waitingPollMax(env),
    waitingLineMax: int('WAITING_LINE_MAX', env.WAITING_LINE_MAX, DEFAULT_WAITING_LINE_MAX, 1, 1_000_000),
    drawEntrantsPageMax: int(
      'DRAW_ENTRANTS_PAGE_MAX',
      env.DRAW_ENTRANTS_PAGE_MAX,
      DEFAULT_DRAW_ENTRANTS_PAGE_MAX,
      1,
      10_000,
    ),
    drawEntrantsPerSec: int('DRAW_ENTRANTS_PER_SEC', env.DRAW_ENTRANTS_PER_SEC, DEFAULT_DRAW_ENTRANTS_PER_SEC, 1, 100),
    waitingFlushMs: int('WAITING_LINE_FLUSH_MS', env.WAITING_LINE_FLUSH_MS, DEFAULT_WAITING_LINE_FLUSH_MS, 10, 5_000),
    waitingJoinWrite: oneOf('WAITING_JOIN_WRITE', env.WAITING_JOIN_WRITE, DEFAULT_WAITING_JOIN_WRITE, JOIN_WRITES),
    waitingJoinGroupMs: int('WAITING_JOIN_GROUP_MS', env.WAITING_JOIN_GROUP_MS, DEFAULT_WAITING_JOIN_GROUP_MS, 0, 50),
    botCheck: parseBotCheck(env),
  };
}

/** WAITING_POLL_MAX_MS, never below WAITING_POLL_MIN_MS (a ceiling under the floor would be no ceiling). */
function waitingPollMax(env: Env): number {
  const max = int('WAITING_POLL_MAX_MS', env.WAITING_POLL_MAX_MS, DEFAULT_WAITING_POLL_MAX_MS, 50, 600_000);
  const min = int('WAITING_POLL_MIN_MS', env.WAITING_POLL_MIN_MS, DEFAULT_WAITING_POLL_MIN_MS, 50, 60_000);
  if (max < min) throw new Error('edge setting WAITING_POLL_MAX_MS must not be below WAITING_POLL_MIN_MS');
  return max;
}

function oneOf<T extends string>(name: string, raw: string | undefined, fallback: T, allowed: readonly T[]): T {
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw))
    throw new Error(`edge setting ${name} must be one of ${allowed.join(', ')}`);
  return raw as T;
}

function parseBotCheck(env: Env): EdgeSettings['botCheck'] {
  const url = env.BOT_CHECK_URL;
  if (!url) return undefined;
  if (!/^https?:\/\//.test(url)) throw new Error('edge setting BOT_CHECK_URL must be an http(s) URL');
  return {
    url,
    // Set URL without secret is a misconfiguration, not "off": refuse rather than let bots through.
    secret: secret('BOT_CHECK_SECRET', env.BOT_CHECK_SECRET),
    timeoutMs: int('BOT_CHECK_TIMEOUT_MS', env.BOT_CHECK_TIMEOUT_MS, DEFAULT_BOT_CHECK_TIMEOUT_MS, 50, 10_000),
  };
}
