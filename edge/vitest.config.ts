/**
 * Vitest project `edge`: the Worker runs inside workerd (@cloudflare/vitest-pool-workers 0.15,
 * vitest 4 plugin API). A Node globalSetup starts the stand-in origin and provides its URL, which
 * becomes the Worker's ORIGIN_URL.
 */
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { fileURLToPath } from 'node:url';
import { defineProject } from 'vitest/config';
import { TEST_EDGE_SECRETS } from '../test/helpers/edge-test-secrets.js';

const root = fileURLToPath(new URL('..', import.meta.url));

export default defineProject({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: `${root}/wrangler.toml` },
      miniflare: {
        bindings: {
          ...TEST_EDGE_SECRETS,
          ORIGIN_URL: inject('standInOriginUrl'),
          ORIGIN_TIMEOUT_MS: '800',
          // One entrant-list page per second per client: the limit test's window is a whole second.
          DRAW_ENTRANTS_PER_SEC: '1',
        },
      },
    })),
  ],
  test: {
    name: 'edge',
    root,
    include: ['test/edge/**/*.test.ts'],
    globalSetup: ['test/edge/global-setup.ts'],
    // A deadline for a hang, not for speed: edge files run beside the origin project's.
    testTimeout: 60_000,
    // The per-request JSON log lines are the Worker working as designed: show them for failing tests only.
    silent: 'passed-only',
  },
});
