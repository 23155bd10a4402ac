/** The edge Worker under Miniflare (support/local-edge.ts), with the test secrets unless told otherwise. */
import { startEdge as startLocalEdge, type StartEdgeOptions as LocalEdgeOptions } from '../../support/local-edge.js';
import { TEST_EDGE_SECRETS } from './edge-test-secrets.js';

export { type RunningEdge } from '../../support/local-edge.js';

export type StartEdgeOptions = Omit<LocalEdgeOptions, 'secrets'> & Partial<Pick<LocalEdgeOptions, 'secrets'>>;

/**
 * The edge's ORIGIN_TIMEOUT_MS in tests: a deadline for a hang, not for speed. With three test files,
 * workerd and Chromium on two cores an origin answer can take longer than the shipped 800 ms, and an
 * edge that gave up on it would turn a decided purchase into a 503 (the buyer's retry then sees the
 * settled order). A test about the timeout itself sets its own (`vars`).
 */
export const TEST_ORIGIN_TIMEOUT_MS = 5_000;

export function startEdge(opts: StartEdgeOptions) {
  return startLocalEdge({
    secrets: TEST_EDGE_SECRETS,
    ...opts,
    vars: { ORIGIN_TIMEOUT_MS: String(TEST_ORIGIN_TIMEOUT_MS), ...opts.vars },
  });
}
