import { defineConfig } from 'vitest/config';

/**
 * Suites whose figures are time-bound (a waiting line paced per second, a rehearsal racing a clock,
 * a storm of clicks within one window, alerts that must fire after 30 s and a dashboard read at one
 * instant): they run after the rest, one file at a time, on a quiet machine — on two cores, beside
 * three other files, their polls came late enough to fail.
 */
const ALONE = [
  'test/e2e/waiting-room.test.ts',
  'test/e2e/watching-a-sale.test.ts',
  'test/e2e/waiting-line-restart.test.ts',
  'test/e2e/rehearsal.test.ts',
  'test/origin/storm.test.ts',
];

const ORIGIN_FILES = [
  'test/origin/**/*.test.ts',
  'test/e2e/**/*.test.ts',
  'test/contract/**/*.test.ts',
  'test/unit/**/*.test.ts',
  'test/docs/**/*.test.ts',
];

/** What both origin projects share: Node, the real Redis and MariaDB, generous bounds. */
const originTest = { environment: 'node' as const, testTimeout: 60_000, hookTimeout: 60_000 };

// Three projects: `origin` and `origin-alone` run in Node against the real Redis and MariaDB
// (origin, e2e, chaos; `npm run test:origin` runs both); `edge` runs the Worker inside workerd
// (edge/vitest.config.ts). Suites share one Redis and one MariaDB server but isolate themselves by
// ids and their own database, so `origin` runs its files side by side (most of their time is waiting
// on services, processes and timers); `origin-alone` runs after it, a file at a time.
export default defineConfig({
  test: {
    maxWorkers: 3,
    projects: [
      './edge/vitest.config.ts',
      {
        test: { ...originTest, name: 'origin', include: ORIGIN_FILES, exclude: ALONE, sequence: { groupOrder: 0 } },
      },
      {
        test: {
          ...originTest,
          name: 'origin-alone',
          include: ALONE,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
