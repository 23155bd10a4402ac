/**
 * What every script module (one per lua/*.lua) is: the script's name, its KEYS in the order the
 * script names them (from one bucket's keys), its ARGV in order (from a typed input), and the one
 * decoder of its raw reply into a typed result. Only these modules know a script's layout; callers
 * hand a ScriptRunner the module, the bucket's keys and the input, and get the decoded result.
 */
import type { ActivityKeys } from '../keys.js';

/** A script's raw reply: `{code, …}` for most, plain values for the probes. */
export type Reply = (string | number)[];

export const SCRIPT_NAMES = [
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
  'group',
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

export interface Script<Input, Result> {
  name: ScriptName;
  /** KEYS, in the script's order, from the keys of the bucket it runs on. */
  keys(k: ActivityKeys): string[];
  /** ARGV, in the script's order. */
  args(input: Input): (string | number)[];
  /** The one translation of the raw reply; throws on a code the script never returns. */
  decode(reply: Reply): Result;
}

export const num = (v: string | number | undefined) => Number(v ?? 0);

export const unknownCode = (script: string, code: number) =>
  new Error(`${script} script returned unknown code ${code}`);
