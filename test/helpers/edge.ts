/** The edge Worker under Miniflare (support/local-edge.ts), with the test secrets unless told otherwise. */
import { startEdge as startLocalEdge, type StartEdgeOptions as LocalEdgeOptions } from '../../support/local-edge.js';
import { TEST_EDGE_SECRETS } from './edge-test-secrets.js';

export { type RunningEdge } from '../../support/local-edge.js';

export type StartEdgeOptions = Omit<LocalEdgeOptions, 'secrets'> & Partial<Pick<LocalEdgeOptions, 'secrets'>>;

export function startEdge(opts: StartEdgeOptions) {
  return startLocalEdge({ secrets: TEST_EDGE_SECRETS, ...opts });
}
