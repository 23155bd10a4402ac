/**
 * `npm run bench`: every benchmark, one after another, each in its own process so none warms or
 * loads another. Each prints its own figures and the ratio to the baseline it measured in the same
 * run. Pass names to run some: `npm run bench -- reserve settle`.
 */
import { spawnSync } from 'node:child_process';
import { ROOT } from './lib/stack.js';

const ALL = ['reserve', 'settle', 'edge-doomed', 'cluster'];
const chosen = process.argv.slice(2).filter((a) => ALL.includes(a));
let failed = 0;
for (const name of chosen.length ? chosen : ALL) {
  console.log(`\n=== bench/${name}.ts ===`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', `bench/${name}.ts`], { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
