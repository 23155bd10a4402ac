import { defineConfig } from 'vitest/config';

// Two projects: `origin` runs in Node against the real Redis and MariaDB (origin, e2e, chaos);
// `edge` runs the Worker inside workerd (edge/vitest.config.ts). Both run in one `vitest run`,
// files side by side: most of a file's time is spent waiting on Redis, MariaDB, workerd, Chromium
// or a child process, so three files at once keep two cores busy; more only queue for the same
// cores. One worker limit for both projects (vitest runs projects with different limits one after
// the other). Each file owns its database,
// ids, ports and Redis keys (test/helpers/), and no assertion depends on how fast the machine is.
export default defineConfig({
  test: {
    maxWorkers: 3,
    projects: [
      './edge/vitest.config.ts',
      {
        test: {
          name: 'origin',
          environment: 'node',
          // test/<area>/ mirrors the code it tests: origin/<feature>/ → test/origin/<feature>/,
          // contract/, bench/, ops/; edge modules that run in Node (the sale page's script, the
          // isolate cache) in test/edge-node/; whole-stack tests in test/e2e/; repo-wide checks in
          // test/repo/ and test/docs/. test/edge/ (workerd) is the edge project's.
          include: [
            'test/origin/**/*.test.ts',
            'test/e2e/**/*.test.ts',
            'test/contract/**/*.test.ts',
            'test/edge-node/**/*.test.ts',
            'test/bench/**/*.test.ts',
            'test/ops/**/*.test.ts',
            'test/repo/**/*.test.ts',
            'test/docs/**/*.test.ts',
          ],
          // Deadlines for a hang, not for speed: with three files at once (and whatever else shares
          // the machine) a start-up that takes 10 s alone can take a minute or more.
          testTimeout: 180_000,
          hookTimeout: 180_000,
          // Suites share one Redis and one MariaDB server but isolate themselves by ids and database.
          fileParallelism: true,
          // A worker runs its files in one module graph: the origin's modules are imported once per
          // worker, not once per file (most of what importing cost a run). Nothing the tests
          // rely on lives in module state: every app, pool, client and registry is made per test.
          isolate: false,
        },
      },
    ],
  },
});
