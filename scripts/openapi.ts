/**
 * `npm run openapi`: writes the OpenAPI documents, the public API's TypeScript types and the route
 * tables of docs/api.md and README.md (scripts/openapi-files.ts). `--check`: writes nothing, lists
 * the files that differ from what would be written, and fails if any does.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generatedFiles, ROOT } from './openapi-files.js';

const check = process.argv.includes('--check');
const stale: string[] = [];
for (const [path, content] of await generatedFiles()) {
  const full = join(ROOT, path);
  const current = existsSync(full) ? readFileSync(full, 'utf8') : undefined;
  if (current === content) continue;
  stale.push(path);
  if (!check) {
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}
if (check && stale.length > 0) {
  console.error(`out of date (run npm run openapi): ${stale.join(', ')}`);
  process.exit(1);
}
console.log(stale.length === 0 ? 'OpenAPI files up to date' : `written: ${stale.join(', ')}`);
