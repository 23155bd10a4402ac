/**
 * Pushes an activity snapshot to the edge (DESIGN §9 `PUT /internal/activities/:id`), signed like
 * edge→origin calls. Best effort: a failed push is logged; the edge refetches on its own.
 */
import type { ActivitySnapshot } from '../contract/activity.js';
import { signEdgeRequest } from '../contract/signing.js';
import type { Logger } from './logger.js';

export type EdgePush = (snapshot: ActivitySnapshot) => Promise<boolean>;

export function createEdgePush(opts: { edgeUrl?: string; secret: string; timeoutMs: number; log: Logger }): EdgePush {
  const { edgeUrl, secret, timeoutMs, log } = opts;
  return async (snapshot) => {
    if (!edgeUrl) return false;
    const path = `/internal/activities/${snapshot.config.activityId}`;
    const body = JSON.stringify(snapshot);
    try {
      const headers = await signEdgeRequest(secret, { method: 'PUT', pathWithQuery: path, body });
      const res = await fetch(new URL(path, edgeUrl), {
        method: 'PUT',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) log.warn({ activityId: snapshot.config.activityId, status: res.status }, 'edge push refused');
      return res.ok;
    } catch (err) {
      log.warn({ activityId: snapshot.config.activityId, err: (err as Error).message }, 'edge push failed');
      return false;
    }
  };
}
