/**
 * The whole stack for end-to-end tests: a real edge (workerd via Miniflare) forwarding to a real
 * origin (its own database, the shared Redis), wired both ways with matching secrets.
 */
import { freePort } from '../../support/processes.js';
import type { Logger } from '../../origin/platform/logger.js';
import { startEdge, type RunningEdge, type StartEdgeOptions } from './edge.js';
import { TEST_EDGE_SECRETS } from './edge-test-secrets.js';
import { startTestOrigin, type TestOrigin } from './origin.js';

export interface TestStack {
  edge: RunningEdge;
  origin: TestOrigin;
  stop(): Promise<void>;
}

export async function startTestStack(
  opts: { originEnv?: Record<string, string>; originLog?: Logger; edge?: Omit<StartEdgeOptions, 'originUrl'> } = {},
): Promise<TestStack> {
  const port = await freePort();
  const edge = await startEdge({ ...opts.edge, originUrl: `http://127.0.0.1:${port}` });
  const origin = await startTestOrigin(
    {
      PORT: String(port),
      EDGE_URL: edge.url,
      EDGE_ORIGIN_SECRET: TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET,
      // Client, origin, workerd, Redis and MariaDB share a small box in tests.
      REDIS_COMMAND_TIMEOUT_MS: '1000',
      ...opts.originEnv,
    },
    undefined,
    { log: opts.originLog },
  );
  return {
    edge,
    origin,
    async stop() {
      await edge.stop();
      await origin.stop();
    },
  };
}
