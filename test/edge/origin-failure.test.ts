import { SELF, createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import worker from '../../edge/index.js';
import {
  BASE,
  bearer,
  newActivityId,
  newUserId,
  openActivity,
  purchase,
  purchaseUrlFor,
  addToLiveList,
  setOrigin,
  snapshotOf,
} from './support.js';

type Json = Record<string, unknown>;

/**
 * How long the slow stand-in origin takes to answer: far beyond ORIGIN_TIMEOUT_MS (800 ms), so an
 * answer sooner is the edge's own, however busy the machine.
 */
const ORIGIN_SLOW_MS = 10_000;

async function timed(p: Promise<Response>): Promise<{ res: Response; ms: number }> {
  const started = Date.now();
  const res = await p;
  return { res, ms: Date.now() - started };
}

describe('origin down or slow: fail closed, fast', () => {
  it('a slow origin is 503 unavailable after ORIGIN_TIMEOUT_MS (800 ms), never a hang', async () => {
    const activityId = await openActivity();
    // The origin would answer after ORIGIN_SLOW_MS: an answer before that is the edge giving up.
    await setOrigin(activityId, { reserve: { delayMs: ORIGIN_SLOW_MS } });
    const user = newUserId();
    const { res, ms } = await timed(purchase(await purchaseUrlFor(activityId, user), user));
    expect(res.status).toBe(503);
    expect(((await res.json()) as Json).error).toBe('unavailable');
    expect(ms).toBeGreaterThanOrEqual(700);
    expect(ms).toBeLessThan(ORIGIN_SLOW_MS);
  });

  it('an origin that drops the connection is 503 unavailable', async () => {
    const activityId = await openActivity();
    await setOrigin(activityId, { reserve: { hangUp: true } });
    const user = newUserId();
    const res = await purchase(await purchaseUrlFor(activityId, user), user);
    expect(res.status).toBe(503);
    expect(((await res.json()) as Json).error).toBe('unavailable');
  });

  it('a stopped origin (nothing listening) is 503 unavailable quickly', async () => {
    const activityId = await openActivity();
    const user = newUserId();
    const url = await purchaseUrlFor(activityId, user);
    const stopped = { ...env, ORIGIN_URL: 'http://127.0.0.1:9' };
    const ctx = createExecutionContext();
    const { res, ms } = await timed(
      Promise.resolve(
        worker.fetch(
          new Request(`${BASE}${url}`, {
            method: 'POST',
            headers: { authorization: await bearer(user), 'idempotency-key': 'k' },
            body: '{"quantity":1}',
          }),
          stopped,
          ctx,
        ),
      ),
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(503);
    expect(((await res.json()) as Json).error).toBe('unavailable');
    expect(ms).toBeLessThan(ORIGIN_SLOW_MS); // no hang: no retrying past the origin timeout
  });

  it('an activity the edge cannot load because the origin is down is 503 unavailable', async () => {
    const activityId = newActivityId();
    await setOrigin(activityId, { snapshot: { ...snapshotOf(activityId), state: 'bogus' } as never });
    await addToLiveList(activityId);
    const res = await SELF.fetch(`${BASE}/api/activities/${activityId}`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as Json).error).toBe('unavailable');
  });

  it('a misconfigured edge answers 500 internal without internals', async () => {
    const broken = { ...env, TICKET_KEYS: '' };
    const activityId = await openActivity();
    const res = await worker.fetch(
      new Request(`${BASE}/api/activities/${activityId}/tickets`, {
        method: 'POST',
        headers: { authorization: await bearer(newUserId()) },
      }),
      broken,
      createExecutionContext(),
    );
    expect(res.status).toBe(500);
    const body = (await res.json()) as Json;
    expect(body.error).toBe('internal');
    expect(body.message).toBe('internal error');
    expect(JSON.stringify(body)).not.toContain('TICKET_KEYS');
  });
});
