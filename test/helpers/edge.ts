/** The edge Worker under Miniflare (bench/lib/local-edge.ts), with the test secrets unless told otherwise. */
import { startEdge as startLocalEdge, type StartEdgeOptions as LocalEdgeOptions } from '../../bench/lib/local-edge.js';
import { TEST_EDGE_SECRETS } from './edge-test-secrets.js';

export { bundleEdge, type RunningEdge } from '../../bench/lib/local-edge.js';

export type StartEdgeOptions = Omit<LocalEdgeOptions, 'secrets'> & Partial<Pick<LocalEdgeOptions, 'secrets'>>;

export function startEdge(opts: StartEdgeOptions) {
  return startLocalEdge({ secrets: TEST_EDGE_SECRETS, ...opts });
}
