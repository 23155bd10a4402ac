/**
 * Origin → edge pushes, signed like edge→origin calls (docs/design.md §9, §10):
 * - `PUT /internal/activities/:id`: an activity snapshot, on every admin change and every sold-out /
 *   refilled transition; the edge also puts the id on its live list at once;
 * - `PUT /internal/activities`: the full list of live activity ids (LiveListJob: at start and every
 *   EDGE_LIVE_LIST_PUSH_MS). The edge answers ids not on it with 404 and no origin call.
 * Both are best effort: a failed push is logged. The edge does not depend on them arriving — each
 * ActivityDO refetches its snapshot from `GET /internal/activities/:id` every ACTIVITY_REFRESH_MS
 * (edge setting, 2 s) while its sale is not over, so a lost push heals within a few seconds; a lost
 * list push is repaired by the next periodic one.
 */
import type { ActivitySnapshot } from '../../contract/activity.js';
import { signEdgeRequest } from '../../contract/signing.js';
import { PeriodicJob } from './periodic.js';
import type { Logger } from './logger.js';

export type EdgePush = (snapshot: ActivitySnapshot) => Promise<boolean>;
export type LiveListPush = (activityIds: string[]) => Promise<boolean>;

export interface PushOptions {
  edgeUrl?: string;
  secret: string;
  timeoutMs: number;
  log: Logger;
}

export async function signedPut(opts: PushOptions, path: string, body: string, what: Record<string, unknown>) {
  const { edgeUrl, secret, timeoutMs, log } = opts;
  if (!edgeUrl) return false;
  try {
    const headers = await signEdgeRequest(secret, { method: 'PUT', pathWithQuery: path, body });
    const res = await fetch(new URL(path, edgeUrl), {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) log.warn({ ...what, status: res.status }, 'edge push refused');
    await res.body?.cancel();
    return res.ok;
  } catch (err) {
    log.warn({ ...what, err: (err as Error).message }, 'edge push failed');
    return false;
  }
}

export function createEdgePush(opts: PushOptions): EdgePush {
  return (snapshot) =>
    signedPut(opts, `/internal/activities/${snapshot.config.activityId}`, JSON.stringify(snapshot), {
      activityId: snapshot.config.activityId,
    });
}

export function createLiveListPush(opts: PushOptions): LiveListPush {
  return (activityIds) =>
    signedPut(opts, '/internal/activities', JSON.stringify({ activityIds }), { liveActivities: activityIds.length });
}

/**
 * Pushes the live list at start and every `everyMs`; `wake()` pushes at once. `liveIds` reads the
 * activities the edge should answer for (the sale store's `liveActivityIds`, handed in by the
 * composition root, so this base module reads no feature's table).
 */
export class LiveListJob extends PeriodicJob {
  constructor(
    private readonly liveIds: () => Promise<string[]>,
    private readonly push: LiveListPush,
    everyMs: number,
    log: Logger,
  ) {
    super('edge-live-list', everyMs, log);
  }

  async round(): Promise<boolean> {
    await this.push(await this.liveIds());
    return false;
  }
}
