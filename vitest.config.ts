import { defineConfig } from 'vitest/config';

// Two projects: `origin` runs in Node against the real Redis and MariaDB (origin, e2e, chaos);
// `edge` runs the Worker inside workerd (edge/vitest.config.ts).
export default defineConfig({
  test: {
    projects: [
      './edge/vitest.config.ts',
      {
        test: {
          name: 'origin',
          environment: 'node',
          include: [
            'test/origin/**/*.test.ts',
            'test/e2e/**/*.test.ts',
            'test/contract/**/*.test.ts',
            'test/unit/**/*.test.ts',
            'test/docs/**/*.test.ts',
          ],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Suites share one Redis and one MariaDB server but isolate themselves by ids and database.
          fileParallelism: false,
        },
      },
    ],
  },
});
