/**
 * The edge as the edge benchmarks drive it: the Worker under Miniflare (workerd's own socket) against
 * the stand-in origin, both with the benchmarks' secrets, and what the origin and a buyer send it —
 * a sale's snapshot, other signed pushes, a user's bearer token.
 */
import { type ActivitySnapshot } from '../../contract/index.js';
import { pushSnapshot, signedPut } from '../../support/edge-calls.js';
import { startEdge, type RunningEdge } from '../../support/local-edge.js';
import { startStandInOrigin, type StandInOrigin } from '../../support/stand-in-origin.js';
import { mintUserToken } from '../rehearsal/jwt.js';
import { BENCH_EDGE_SECRETS } from './stack.js';

export interface BenchEdge {
  edge: RunningEdge;
  origin: StandInOrigin;
  /** The origin's signed `PUT <path>`; throws unless the edge answers 200. */
  put(path: string, body: string): Promise<void>;
  /** The origin's push of a sale's snapshot; throws unless the edge answers 200. */
  push(snapshot: ActivitySnapshot): Promise<void>;
  stop(): Promise<void>;
}

/** `vars` override the edge's bindings (e.g. TICKET_TTL_SECONDS). */
export async function startBenchEdge(vars: Record<string, string> = {}): Promise<BenchEdge> {
  const secret = BENCH_EDGE_SECRETS.EDGE_ORIGIN_SECRET;
  const origin = await startStandInOrigin({ secret });
  const edge = await startEdge({ originUrl: origin.url, secrets: BENCH_EDGE_SECRETS, vars });
  const ok = async (what: string, res: Response) => {
    if (res.status !== 200) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  };
  return {
    edge,
    origin,
    put: async (path, body) => ok(`PUT ${path}`, await signedPut(edge.url, secret, path, body)),
    push: async (snapshot) => ok(`push ${snapshot.config.activityId}`, await pushSnapshot(edge.url, secret, snapshot)),
    async stop() {
      await edge.stop();
      await origin.stop();
    },
  };
}

/** `Bearer <JWT>` for a user, valid an hour, signed with the benchmarks' user-token secret unless told otherwise. */
export function bearerFor(userId: string, secret: string = BENCH_EDGE_SECRETS.USER_TOKEN_SECRET): string {
  return `Bearer ${mintUserToken(secret, userId, Math.floor(Date.now() / 1000) + 3600)}`;
}
