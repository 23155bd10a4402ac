/**
 * Lua scripts, loaded by filename at start-up (fail fast on a missing one), and the one TypeScript
 * mirror of their return codes. Shared Lua lives in lua/includes/ and is pulled in by a line
 * `--- @include "includes/<name>"` (as BullMQ does), expanded here before the SHA is taken.
 * Callers outside origin/redis/ use the StockStore, never these raw commands.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { RedisClient } from './client.js';
import { projectPath } from '../paths.js';

export const LUA_DIR = projectPath('lua');

/** lua/reserve-6.lua */
export const ReserveCode = {
  OK: 1,
  EXISTS: 2,
  BORROW: 3,
  PENDING: 4,
  NOT_WARMED: -1,
  PAUSED: -2,
  ENDED: -3,
  SOLD_OUT: -4,
  LIMIT_EXCEEDED: -5,
  INSUFFICIENT_STOCK: -6,
  DENIED: -8,
  NOT_ELIGIBLE: -9,
} as const;

/** lua/release-3.lua */
export const ReleaseCode = { RELEASED: 1, ALREADY: 2, NOT_WARMED: -1 } as const;

/** lua/warmup-4.lua */
export const WarmupCode = { LOADED: 1, ALREADY: 0, HAS_HISTORY: -1 } as const;

/** lua/refill-2.lua */
export const RefillCode = { REFILLED: 1, ALREADY: 2, NOT_WARMED: -1 } as const;

/** lua/recover-9.lua */
export const RecoverCode = { RECOVERED: 1, WARM: -1, NO_STREAM: -2 } as const;

/** lua/requeue-5.lua */
export const RequeueCode = {
  REQUEUED: 1,
  ALREADY: 2,
  NOT_WARMED: -1,
  NOT_RELEASED: -2,
  HOLDS_OTHER: -3,
  SOLD_OUT: -4,
  DENIED: -8,
} as const;

/** lua/take-3.lua (a borrow's donor step) */
export const TakeCode = { TAKEN: 1, ALREADY: 2, NOT_WARMED: -1, CLOSED: -2, SHORT: -4 } as const;

/** lua/confirm-3.lua (a borrow's last step, at home) */
export const ConfirmCode = { CONFIRMED: 1, ALREADY: 2, ABANDONED: -1 } as const;

/** lua/abandon-2.lua (a borrow given up, at home) */
export const AbandonCode = { ABANDONED: 1, ALREADY: 2, CONFIRMED: -1, TOO_FRESH: -2, UNKNOWN: -3 } as const;

/** lua/give-back-2.lua (a given-up borrow's units back to the donor) */
export const GiveBackCode = { RETURNED: 1, NOTHING: 2, NOT_WARMED: -1 } as const;

/** lua/enter-6.lua */
export const EnterCode = {
  ENTERED: 1,
  EXISTS: 2,
  NOT_WARMED: -1,
  PAUSED: -2,
  ENDED: -3,
  LIMIT_EXCEEDED: -5,
  CLOSED: -7,
  DENIED: -8,
  NOT_ELIGIBLE: -9,
} as const;

export interface LuaScript {
  name: string;
  keys: number;
  source: string;
  sha: string;
}

const INCLUDE = /^--- @include "([a-z/-]+)"$/gm;

/** The script with every `--- @include` line replaced by the included file (each at most once). */
function expandIncludes(dir: string, source: string, seen = new Set<string>()): string {
  return source.replace(INCLUDE, (_line, name: string) => {
    if (seen.has(name)) return '';
    seen.add(name);
    return expandIncludes(dir, readFileSync(`${dir}/${name}.lua`, 'utf8'), seen).trimEnd();
  });
}

/** Reads every `<name>-<keys>.lua` of the folder, includes expanded. */
export function readScripts(dir = LUA_DIR): Map<string, LuaScript> {
  const scripts = new Map<string, LuaScript>();
  for (const file of readdirSync(dir).sort()) {
    const m = /^([a-z-]+)-(\d+)\.lua$/.exec(file);
    if (!m) continue;
    const source = expandIncludes(dir, readFileSync(`${dir}/${file}`, 'utf8'));
    scripts.set(m[1]!, {
      name: m[1]!,
      keys: Number(m[2]),
      source,
      sha: createHash('sha1').update(source).digest('hex'),
    });
  }
  for (const needed of SCRIPT_NAMES) {
    if (!scripts.has(needed)) throw new Error(`lua script "${needed}" missing from ${dir}`);
  }
  return scripts;
}

type Reply = (string | number)[];
export type ScriptCall = (keys: string[], args: (string | number)[]) => Promise<Reply>;

const SCRIPT_NAMES = [
  'reserve',
  'release',
  'warmup',
  'refill',
  'recover',
  'requeue',
  'take',
  'confirm',
  'abandon',
  'give-back',
  'enter',
  'primary',
  'deny',
  'replication',
  'draw-reserve',
  'entry-page',
] as const;
type ScriptName = (typeof SCRIPT_NAMES)[number];

export type ScriptCommands = Record<ScriptName, ScriptCall>;

/** Registers the scripts on a client as EVALSHA commands (ioredis falls back to EVAL on NOSCRIPT). */
export function defineScripts(redis: RedisClient, scripts = readScripts()): ScriptCommands {
  for (const s of scripts.values())
    redis.defineCommand(`sk_${s.name.replace(/-/g, '_')}`, { numberOfKeys: s.keys, lua: s.source });
  const call = (name: string) => (keys: string[], args: (string | number)[]) =>
    (redis as unknown as Record<string, (...a: (string | number)[]) => Promise<Reply>>)[`sk_${name}`]!(
      ...keys,
      ...args,
    );
  return Object.fromEntries(SCRIPT_NAMES.map((name) => [name, call(name.replace(/-/g, '_'))])) as ScriptCommands;
}
