/**
 * What the edge says about a sale right now, asked by the origin for the operator console:
 * - the public activity (`GET /api/activities/:id`, what buyers read): the snapshot version the edge
 *   serves, its public state and stock hint — so the console shows when a change is in force there;
 * - the waiting room's figures (`GET /internal/activities/:id/waiting-room`, signed) for a queue sale.
 * Each read is bounded by EDGE_PUSH_TIMEOUT_MS; a failed read is reported, never thrown.
 */
import type { PublicState, StockHint } from '../../contract/activity.js';
import { signEdgeRequest } from '../../contract/signing.js';
import type { OriginConfig } from '../platform/config.js';

/** Where the edge is and how to ask it: its URL (none: nothing to ask), the channel's secret, the time limit. */
export interface EdgeViewDeps {
  config: Pick<OriginConfig, 'EDGE_URL' | 'EDGE_ORIGIN_SECRET' | 'EDGE_PUSH_TIMEOUT_MS'>;
}

export type EdgeActivity =
  | { kind: 'none' }
  | { kind: 'failed'; error: string }
  | { kind: 'seen'; version: number; state: PublicState; stockHint: StockHint | null; at: string };

async function edgeGet(deps: EdgeViewDeps, path: string, { signed }: { signed: boolean }): Promise<Response> {
  const { EDGE_URL, EDGE_ORIGIN_SECRET, EDGE_PUSH_TIMEOUT_MS } = deps.config;
  const headers = signed ? await signEdgeRequest(EDGE_ORIGIN_SECRET, { method: 'GET', pathWithQuery: path }) : {};
  return fetch(new URL(path, EDGE_URL), { headers, signal: AbortSignal.timeout(EDGE_PUSH_TIMEOUT_MS) });
}

export async function edgeActivity(deps: EdgeViewDeps, activityId: string): Promise<EdgeActivity> {
  if (!deps.config.EDGE_URL) return { kind: 'none' };
  try {
    const res = await edgeGet(deps, `/api/activities/${activityId}`, { signed: false });
    if (!res.ok) {
      await res.body?.cancel();
      return { kind: 'failed', error: `the edge answered ${res.status}` };
    }
    const body = (await res.json()) as { version: number; state: PublicState; stockHint?: StockHint };
    return {
      kind: 'seen',
      version: body.version,
      state: body.state,
      stockHint: body.stockHint ?? null,
      at: new Date().toISOString(),
    };
  } catch (err) {
    return { kind: 'failed', error: (err as Error).message };
  }
}

/** People in the sale's waiting line at the edge, or null when the edge could not say. */
export async function edgeWaitingLine(deps: EdgeViewDeps, activityId: string): Promise<number | null> {
  if (!deps.config.EDGE_URL) return null;
  try {
    const res = await edgeGet(deps, `/internal/activities/${activityId}/waiting-room`, { signed: true });
    if (!res.ok) {
      await res.body?.cancel();
      return null;
    }
    return ((await res.json()) as { waiting: number }).waiting;
  } catch {
    return null;
  }
}
