/**
 * `npm run test:related -- <source files>`: the inner loop of one change. Runs the test files that
 * import one of the given files — directly or through other modules, but not through a composition
 * root (the modules that assemble a whole origin or Worker, below) — and the test folder that mirrors
 * the file's own folder (origin/lottery/draw.ts → test/origin/lottery/). vitest's own `related` mode
 * follows every import, so a change to any origin module would run every test that starts an origin:
 * most of the suite. `--all` runs that instead (`vitest related --run`), `--list` only prints the files.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Modules that import (nearly) everything: a path through one of them relates a test to the whole app. */
const COMPOSITION_ROOTS = new Set([
  'origin/main.ts',
  'origin/server.ts',
  'origin/app.ts',
  'origin/parts.ts',
  'edge/index.ts',
  'edge/app.ts',
]);
const SOURCE_DIRS = ['origin', 'edge', 'contract', 'bench', 'scripts', 'support', 'test'];
const SOURCE = /\.(ts|js)$/;
const IMPORT =
  /(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;

function walk(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (SOURCE.test(name)) out.push(relative(ROOT, path));
  }
  return out;
}

/** A relative specifier as the repo file it names (`./x.js` is `./x.ts` when that exists). */
function resolveImport(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const target = normalize(join(dirname(from), spec));
  for (const candidate of [target, target.replace(/\.js$/, '.ts'), `${target}.ts`, join(target, 'index.ts')])
    if (existsSync(join(ROOT, candidate)) && statSync(join(ROOT, candidate)).isFile()) return candidate;
  return null;
}

/** Who imports each file, over every source folder. */
function importers(files: string[]): Map<string, Set<string>> {
  const by = new Map<string, Set<string>>();
  for (const file of files) {
    for (const m of readFileSync(join(ROOT, file), 'utf8').matchAll(IMPORT)) {
      const target = resolveImport(file, (m[1] ?? m[2] ?? m[3])!);
      if (target === null) continue;
      if (!by.has(target)) by.set(target, new Set());
      by.get(target)!.add(file);
    }
  }
  return by;
}

const isTest = (file: string) => file.startsWith('test/') && file.endsWith('.test.ts');

/** Test files related to `changed`: through importers short of a composition root, and its mirror folder. */
export function relatedTests(changed: string[], files: string[]): string[] {
  const by = importers(files);
  const found = new Set<string>();
  const seen = new Set<string>();
  const queue = [...changed];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    if (isTest(file)) found.add(file);
    if (COMPOSITION_ROOTS.has(file) && !changed.includes(file)) continue;
    for (const importer of by.get(file) ?? []) queue.push(importer);
  }
  for (const file of changed) {
    const mirror = join('test', dirname(file));
    for (const test of files) if (isTest(test) && dirname(test) === mirror) found.add(test);
  }
  return [...found].sort();
}

function main(argv: string[]) {
  const list = argv.includes('--list');
  const all = argv.includes('--all');
  const changed = argv.filter((a) => !a.startsWith('--')).map((a) => relative(ROOT, resolve(a)));
  if (changed.length === 0) {
    console.error('usage: npm run test:related -- <source files> [--list] [--all]');
    process.exit(2);
  }
  const missing = changed.filter((f) => !existsSync(join(ROOT, f)));
  if (missing.length) {
    console.error(`no such file: ${missing.join(', ')}`);
    process.exit(2);
  }
  const vitest = join(ROOT, 'node_modules', '.bin', 'vitest');
  if (all) process.exit(spawnSync(vitest, ['related', '--run', ...changed], { stdio: 'inherit' }).status ?? 1);
  const tests = relatedTests(
    changed,
    SOURCE_DIRS.flatMap((d) => walk(join(ROOT, d))),
  );
  console.log(`${tests.length} test file(s) related to ${changed.join(', ')}:\n  ${tests.join('\n  ')}`);
  if (list || tests.length === 0) return;
  process.exit(spawnSync(vitest, ['run', ...tests], { stdio: 'inherit' }).status ?? 1);
}

main(process.argv.slice(2));
