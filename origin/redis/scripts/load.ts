/**
 * Lua scripts, loaded by filename at start-up (fail fast on a missing one) and registered on a
 * client as EVALSHA commands. Shared Lua lives in lua/includes/ and is pulled in by a line
 * `--- @include "includes/<name>"` (as BullMQ does), expanded here before the SHA is taken. Each
 * script's keys, arguments and the decoding of its reply live in its own module beside this one
 * (reserve.ts, …), its codes in the one table of every script (reply-codes.ts, the mirror of
 * lua/includes/reply-codes.lua); callers run them through a ScriptRunner (runner.ts), never these raw
 * commands.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { RedisClient } from '../client.js';
import { projectPath } from '../../platform/paths.js';
import { SCRIPT_NAMES, type Reply, type ScriptName } from './script.js';

export const LUA_DIR = projectPath('lua');

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

export type ScriptCall = (keys: string[], args: (string | number)[]) => Promise<Reply>;

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
