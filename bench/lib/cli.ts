/**
 * A benchmark's command line and its start as a script: numeric options by their defaults
 * (`--seconds 5`), on/off flags and free text options, parsed once with node:util's parseArgs; and
 * `runAsScript`, which runs the benchmark when its file is the entry point (`npx tsx bench/x.ts`),
 * not when bench/run.ts imports it.
 */
import { parseArgs } from 'node:util';

export interface OptionSpec<N extends string, F extends string, T extends string> {
  /** Numeric options and their defaults. */
  numbers: Record<N, number>;
  /** Boolean flags (default off). */
  flags?: readonly F[];
  /** Text options without a default. */
  texts?: readonly T[];
  /** Refuse unknown options (default true). */
  strict?: boolean;
}

export type Options<N extends string, F extends string, T extends string> = Record<N, number> &
  Record<F, boolean> &
  Record<T, string | undefined>;

/** Parses this process's command line (process.argv after the script) by `spec`. */
export function benchOptions<N extends string, F extends string = never, T extends string = never>(
  spec: OptionSpec<N, F, T>,
): Options<N, F, T> {
  const numbers = Object.entries(spec.numbers) as [N, number][];
  const options: Record<string, { type: 'string' | 'boolean'; default?: string | boolean }> = {};
  for (const [name, value] of numbers) options[name] = { type: 'string', default: String(value) };
  for (const name of spec.flags ?? []) options[name] = { type: 'boolean', default: false };
  for (const name of spec.texts ?? []) options[name] = { type: 'string' };
  const { values } = parseArgs({ args: process.argv.slice(2), options, strict: spec.strict ?? true });
  const out: Record<string, number | boolean | string | undefined> = {};
  for (const [name] of numbers) out[name] = Number(values[name]);
  for (const name of spec.flags ?? []) out[name] = values[name] === true;
  for (const name of spec.texts ?? []) out[name] = values[name] as string | undefined;
  return out as Options<N, F, T>;
}

/**
 * Runs `main` when the module at `moduleUrl` (its import.meta.url) is the script Node started; exits
 * with the exit code the benchmark set (a failed check of its own), 1 on an error.
 */
export function runAsScript(moduleUrl: string, main: () => Promise<unknown>): void {
  if (moduleUrl !== `file://${process.argv[1]}`) return;
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
