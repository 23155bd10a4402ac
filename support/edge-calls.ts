/**
 * What the origin sends the edge, for a test or a benchmark that plays the origin: an open sale's
 * snapshot with everyday settings (any of them overridden) and the signed `PUT /internal/...` calls
 * (docs/design.md §9). Web APIs only, so workerd tests (test/edge) use it as well as Node.
 */
import { signEdgeRequest, type ActivitySnapshot } from '../contract/index.js';

export type SnapshotOverrides = Partial<ActivitySnapshot['config']> & Partial<Omit<ActivitySnapshot, 'config'>>;

/** A sale open since a minute ago for an hour, one unit per user, one purchase per second per user. */
export function openSnapshot(activityId: string, over: SnapshotOverrides = {}): ActivitySnapshot {
  const { state = 'open', soldOut = false, ...config } = over;
  const now = Date.now();
  return {
    config: {
      activityId,
      skuId: '1',
      title: `bench ${activityId}`,
      startsAt: new Date(now - 60_000).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
      maxPerUser: 1,
      paymentTimeoutSeconds: 900,
      userRatePerSec: 1,
      admissionRatePerSec: 100_000,
      admissionShards: 4,
      version: 1,
      ...config,
    },
    state,
    soldOut,
  };
}

type Fetcher = (url: string, init: RequestInit) => Promise<Response>;

/** `PUT <path>` to the edge at `baseUrl`, signed with the edge↔origin secret as the origin signs. */
export async function signedPut(
  baseUrl: string,
  secret: string,
  path: string,
  body: string,
  fetcher: Fetcher = fetch,
): Promise<Response> {
  const headers = await signEdgeRequest(secret, { method: 'PUT', pathWithQuery: path, body });
  return fetcher(`${baseUrl}${path}`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/json' },
    body,
  });
}

/** The origin's `PUT /internal/activities/:id`: the edge learns (or updates) a sale. */
export function pushSnapshot(
  baseUrl: string,
  secret: string,
  snapshot: ActivitySnapshot,
  fetcher: Fetcher = fetch,
): Promise<Response> {
  return signedPut(
    baseUrl,
    secret,
    `/internal/activities/${snapshot.config.activityId}`,
    JSON.stringify(snapshot),
    fetcher,
  );
}
