/**
 * One benchmark in its own process for bench/run.ts: imports BENCH_MODULE, awaits its exported
 * BENCH_EXPORT function (the benchmark prints its own tables) and writes what it resolves to as JSON
 * to BENCH_RESULT_FILE. Options after `--` on the runner's command line reach the benchmark's argv.
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { ROOT } from '../../support/processes.js';

const { BENCH_MODULE, BENCH_EXPORT, BENCH_RESULT_FILE } = process.env;
if (!BENCH_MODULE || !BENCH_EXPORT || !BENCH_RESULT_FILE)
  throw new Error('bench-child needs BENCH_MODULE, BENCH_EXPORT, BENCH_RESULT_FILE');
const mod = (await import(pathToFileURL(join(ROOT, BENCH_MODULE)).href)) as Record<string, unknown>;
const run = mod[BENCH_EXPORT];
if (typeof run !== 'function') throw new Error(`${BENCH_MODULE} does not export a function ${BENCH_EXPORT}`);
try {
  const result: unknown = await run();
  writeFileSync(BENCH_RESULT_FILE, JSON.stringify(result ?? null));
  // A benchmark that reports figures but fails its own check sets process.exitCode.
  process.exit(process.exitCode ?? 0);
} catch (err) {
  console.error(err);
  process.exit(1);
}
