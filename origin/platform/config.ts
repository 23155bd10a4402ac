/**
 * Origin configuration: parsed and validated once at start from the environment (docs/design.md §9), then
 * passed down. Here: where the origin runs and connects, its secrets, and the rules between settings;
 * every timeout, limit and retry count, with its default, is in config-tuning.ts.
 */
import { z } from 'zod';
import { TUNING_SETTINGS } from './config-tuning.js';
import {
  DEV_SECRETS,
  isLoopbackHost,
  MIN_PRODUCTION_SECRET_LENGTH,
  parseOperators,
  SECRET_NAMES,
  SHARED_ADMIN_NAME,
  type AdminOperator,
} from './secret-rules.js';

/** What REDIS_KEY_PREFIX may hold: no braces (they would move the hash tag), no spaces. */
export const KEY_PREFIX_PATTERN = /^[A-Za-z0-9_.:-]{0,64}$/;

const envSchema = z.object({
  // Where the process runs and what it serves.
  /** `production` refuses to start with a dev default secret. */
  NODE_ENV: z.string().default('development'),
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).default(3000),
  /** What this process runs: HTTP API, settlement consumers, or both. */
  ORIGIN_ROLE: z.enum(['all', 'http', 'consumers']).default('all'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `1` lets dev defaults (public secrets, open /metrics) through on a non-loopback HOST outside production. */
  ALLOW_DEV_SECRETS: z.enum(['0', '1']).default('0'),
  /** Bearer token for /metrics and /healthz; unset = open (allowed only where dev defaults are). */
  METRICS_TOKEN: z.string().min(16).optional(),
  /** Serve /metrics and /healthz on their own listener (METRICS_HOST:METRICS_PORT) instead of HOST:PORT. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  METRICS_HOST: z.string().default('127.0.0.1'),
  // Where it connects (and, for the console, where docs/ is published).
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .default('redis://127.0.0.1:6379'),
  /** `host:port,host:port,…` of Redis Cluster masters: when set, the origin uses the cluster, not REDIS_URL. */
  REDIS_CLUSTER_NODES: z
    .string()
    .regex(/^[^\s,:]+:\d{1,5}(,[^\s,:]+:\d{1,5})*$/, 'must be host:port[,host:port…]')
    .optional(),
  /** Put in front of every Redis key, the registry and the pub/sub channel: stacks sharing a Redis stay apart. */
  REDIS_KEY_PREFIX: z
    .string()
    .regex(KEY_PREFIX_PATTERN, 'letters, digits and _ . : - only (at most 64; no braces)')
    .default(''),
  MYSQL_URL: z
    .string()
    .regex(/^mysql:\/\//, 'must be a mysql:// URL')
    .default('mysql://root@127.0.0.1:3306/seckill'),
  /** Where admin changes and sold-out transitions are pushed (docs/design.md §9); unset = no edge. */
  EDGE_URL: z.url().optional(),
  /** Downstream order events (docs/design.md §10) are POSTed here (http or https); unset = no events are written at all. */
  ORDER_EVENTS_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  /**
   * Where a shadow sale's order events go (docs/rehearsal.md: the rehearsal's own receiver); unset =
   * a shadow sale's events are not written at all. Never ORDER_EVENTS_URL: a rehearsal's orders
   * never reach the real receiver. Same delivery settings and secret as ORDER_EVENTS_URL.
   */
  SHADOW_ORDER_EVENTS_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  /** Where docs/ is published (e.g. https://github.com/<owner>/<repo>/blob/main); set, the console's
   * alert banners link their docs section there, unset they name the file and section. */
  CONSOLE_DOCS_URL: z.url({ protocol: /^https?$/ }).optional(),
  // What proves who calls and who answers.
  /** The shared admin token (changes are recorded as made by `admin`); defaults to the dev secret
   * only when ADMIN_TOKENS is not set either. */
  ADMIN_TOKEN: z.string().min(8).optional(),
  /** Per-operator admin tokens, `alice:<token>,bob:<token>`: each change records the operator's name
   * as its actor. Beside ADMIN_TOKEN or instead of it. */
  ADMIN_TOKENS: z.string().optional(),
  EDGE_ORIGIN_SECRET: z.string().min(16).default(DEV_SECRETS.EDGE_ORIGIN_SECRET),
  PAYMENT_WEBHOOK_SECRET: z.string().min(16).default(DEV_SECRETS.PAYMENT_WEBHOOK_SECRET),
  /**
   * Key of every lottery's seed: seed = HMAC(DRAW_SECRET, activity id and a random nonce
   * kept in MySQL). Only its commitment is stored until the reveal, so MySQL alone cannot tell a draw's
   * outcome. Changing it strands the seeds of lotteries not yet drawn (their draws refuse to run).
   */
  DRAW_SECRET: z.string().min(16).default(DEV_SECRETS.DRAW_SECRET),
  /** HMAC-SHA256 key of `x-event-signature`; required when ORDER_EVENTS_URL or SHADOW_ORDER_EVENTS_URL is set. */
  ORDER_EVENTS_SECRET: z.string().min(16).optional(),
  ...TUNING_SETTINGS,
});

/** Every setting's name (docs/configuration.md must list each: test/docs/docs.test.ts). */
export const CONFIG_NAMES = Object.keys(envSchema.shape);

export type OriginConfig = ReturnType<typeof loadConfig>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: Record<string, string | undefined> = process.env) {
  // Empty strings mean "not set": fall back to the default instead of failing on "".
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid origin configuration — ${issues}`);
  }
  const { ADMIN_TOKEN, ...rest } = parsed.data;
  const fail = (name: string, why: string) => {
    throw new ConfigError(`invalid origin configuration — ${name}: ${why}`);
  };
  const operators = rest.ADMIN_TOKENS === undefined ? [] : parseOperators(rest.ADMIN_TOKENS);
  if (typeof operators === 'string') fail('ADMIN_TOKENS', operators);
  const c = {
    ...rest,
    ADMIN_TOKEN: ADMIN_TOKEN ?? (rest.ADMIN_TOKENS === undefined ? DEV_SECRETS.ADMIN_TOKEN : undefined),
  };
  /** Who may call the admin API: the shared token as `admin`, and every named operator. */
  const ADMIN_OPERATORS: readonly AdminOperator[] = [
    ...(c.ADMIN_TOKEN === undefined ? [] : [{ name: SHARED_ADMIN_NAME, token: c.ADMIN_TOKEN }]),
    ...(operators as AdminOperator[]),
  ];
  const production = c.NODE_ENV === 'production';
  // Dev defaults are public (they are in this repository): only a loopback-bound dev origin may use
  // them, unless the operator says otherwise outside production.
  const devDefaultsAllowed = !production && (isLoopbackHost(c.HOST) || c.ALLOW_DEV_SECRETS === '1');
  const where = production ? 'in production' : `when HOST=${c.HOST} is not loopback (or set ALLOW_DEV_SECRETS=1)`;
  for (const [name, value] of Object.entries(DEV_SECRETS)) {
    if (c[name as keyof typeof DEV_SECRETS] === value && !devDefaultsAllowed)
      fail(name, `is the public dev default; set a real secret ${where}`);
  }
  if (c.ORDER_EVENTS_URL && !c.ORDER_EVENTS_SECRET)
    fail('ORDER_EVENTS_SECRET', 'required when ORDER_EVENTS_URL is set');
  if (c.SHADOW_ORDER_EVENTS_URL && !c.ORDER_EVENTS_SECRET)
    fail('ORDER_EVENTS_SECRET', 'required when SHADOW_ORDER_EVENTS_URL is set');
  if (c.SHADOW_ORDER_EVENTS_URL && c.SHADOW_ORDER_EVENTS_URL === c.ORDER_EVENTS_URL)
    fail('SHADOW_ORDER_EVENTS_URL', "must not be ORDER_EVENTS_URL: a rehearsal's events never reach the real receiver");
  if (c.REQUEST_TIMEOUT_MS <= Math.max(c.HEADERS_TIMEOUT_MS, c.BODY_TIMEOUT_MS))
    fail('REQUEST_TIMEOUT_MS', 'must exceed HEADERS_TIMEOUT_MS and BODY_TIMEOUT_MS (it is the backstop of both)');
  if (c.ORDER_EVENTS_TIMEOUT_MS >= c.ORDER_EVENTS_LEASE_MS)
    fail('ORDER_EVENTS_LEASE_MS', 'must exceed ORDER_EVENTS_TIMEOUT_MS (a live delivery must not be claimed twice)');
  // Real secrets are required wherever dev defaults are refused: an 8-character admin token on
  // 0.0.0.0 is as guessable outside production as in it.
  if (!devDefaultsAllowed) {
    const short = (value: string | undefined) => value !== undefined && value.length < MIN_PRODUCTION_SECRET_LENGTH;
    const floor = `must be at least ${MIN_PRODUCTION_SECRET_LENGTH} characters ${where}`;
    for (const name of SECRET_NAMES) if (short(c[name])) fail(name, floor);
    for (const o of operators as AdminOperator[])
      if (short(o.token)) fail('ADMIN_TOKENS', `${o.name}'s token ${floor}`);
  }
  // /metrics and /healthz beside the public payment webhook need a token or their own listener.
  if (!devDefaultsAllowed && c.METRICS_TOKEN === undefined && c.METRICS_PORT === undefined)
    fail('METRICS_TOKEN', `set it (or METRICS_PORT for a separate listener) ${where}`);
  // ... and their own listener on a non-loopback address is as open: it needs the token too.
  const openMetricsAllowed = !production && c.ALLOW_DEV_SECRETS === '1';
  if (
    c.METRICS_PORT !== undefined &&
    !isLoopbackHost(c.METRICS_HOST) &&
    c.METRICS_TOKEN === undefined &&
    !openMetricsAllowed
  )
    fail(
      'METRICS_TOKEN',
      `required when METRICS_HOST=${c.METRICS_HOST} is not loopback${production ? '' : ' (or set ALLOW_DEV_SECRETS=1)'}`,
    );
  return { ...c, ADMIN_OPERATORS };
}
