/**
 * Waiting-room polls and a gone place that says why, in workerd:
 * polls with made-up ids cost at most one user's poll rate of admission-shard calls; a sale without
 * a waiting room and a malformed id are refused before any Durable Object; a buyer polling as told is
 * never refused; and a place that is gone says why.
 */
import { SELF, env, listDurableObjectIds } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { BASE, bearer, newUserId, openActivity, purchase, purchaseUrlFor, sleep } from '../support.js';
import { admissionShard } from '../../../edge/durable/names.js';

type Json = Record<string, unknown>;

const admission = (activityId: string) => admissionShard(env, activityId, 0);

async function shardExists(activityId: string): Promise<boolean> {
  const id = admission(activityId).id;
  return (await listDurableObjectIds(env.ADMISSION)).some((x) => x.equals(id));
}

async function pollOf(url: string, auth: string): Promise<{ status: number; body: Json }> {
  const res = await SELF.fetch(`${BASE}${url}`, { headers: { authorization: auth } });
  return { status: res.status, body: (await res.json()) as Json };
}

/**
 * A queue sale with one shard at 1/s; the first buyer takes the token, `ahead` more wait (and never
 * poll), then the returned buyer waits. The line forms only if these purchases come within the
 * second the token takes to refill; on a machine busy enough to spread them further, a token is
 * back, someone is admitted at once, and the line is built again on a new sale.
 */
async function lineOfOne(ahead = 0) {
  for (let attempt = 1; ; attempt++) {
    const activityId = await openActivity({ overflow: 'queue', admissionRatePerSec: 1, admissionShards: 1 });
    const first = newUserId();
    expect((await purchase(await purchaseUrlFor(activityId, first), first)).status).toBe(202);
    for (let i = 0; i < ahead; i++) {
      const other = newUserId();
      expect((await purchase(await purchaseUrlFor(activityId, other), other)).status).toBe(202);
    }
    const user = newUserId();
    const res = await purchase(await purchaseUrlFor(activityId, user), user);
    const place = (await res.json()) as { status: string; pollUrl: string; pollAfterMs: number; position: number };
    expect(res.status).toBe(202);
    if ((place.status !== 'waiting' || place.position !== ahead) && attempt < 10) continue;
    expect([place.status, place.position]).toEqual(['waiting', ahead]);
    return { activityId, user, auth: await bearer(user), place };
  }
}

describe('waiting-room polls', () => {
  it('30 polls of made-up places by one user make at most 1 admission-shard call per second', async () => {
    const { activityId } = await lineOfOne();
    const bot = newUserId();
    const auth = await bearer(bot);
    const before = (await admission(activityId).stats()).calls;
    const statuses: number[] = [];
    const started = Date.now();
    for (let i = 0; i < 30; i++) {
      const { status } = await pollOf(`/api/activities/${activityId}/waiting/abc${i}-${i + 1}`, auth);
      statuses.push(status);
    }
    const elapsedMs = Date.now() - started;
    const calls = (await admission(activityId).stats()).calls - before;
    expect(calls).toBeGreaterThanOrEqual(1);
    // The user's waiting-poll bucket (1 per WAITING_POLL_MIN_MS = 1 s, burst 1). On main every poll was a call.
    expect(calls).toBeLessThanOrEqual(1 + Math.floor(elapsedMs / 1000));
    expect(statuses.filter((s) => s === 404).length).toBe(calls);
    expect(statuses.filter((s) => s === 429).length).toBe(30 - calls);
  });

  it('polls on a sale without a waiting room are 404 with no admission-shard call', async () => {
    const activityId = await openActivity({ admissionShards: 1 }); // overflow: reject (the default)
    const auth = await bearer(newUserId());
    for (let i = 1; i <= 10; i++) {
      const { status, body } = await pollOf(`/api/activities/${activityId}/waiting/k${i}-${i}`, auth);
      expect([status, body.error, body.message]).toEqual([404, 'not_found', 'this sale has no waiting room']);
    }
    expect(await shardExists(activityId)).toBe(false);
  });

  it('malformed place ids are 404 before any Durable Object call (no JWT needed to learn it)', async () => {
    const activityId = await openActivity({ overflow: 'queue', admissionShards: 1 });
    const auth = await bearer(newUserId());
    for (const id of ['x', 'ABC-1', 'a-0', 'a-01', 'a-1-2', `${'a'.repeat(12)}-1`, `a-${'9'.repeat(16)}`, '%2e%2e']) {
      const { status, body } = await pollOf(`/api/activities/${activityId}/waiting/${id}`, auth);
      expect([id, status, body.error]).toEqual([id, 404, 'not_found']);
    }
    expect(await shardExists(activityId)).toBe(false);
  });

  it('a buyer polling as told is never refused by the poll limit', async () => {
    const { auth, place } = await lineOfOne(3);
    expect(place.position).toBe(3);
    let answer: { status: number; body: Json } = { status: 202, body: place as unknown as Json };
    const statuses: number[] = [];
    for (let i = 0; i < 10 && answer.body.status === 'waiting'; i++) {
      await sleep(answer.body.pollAfterMs as number);
      answer = await pollOf(place.pollUrl, auth);
      statuses.push(answer.status);
    }
    expect(statuses.length).toBeGreaterThanOrEqual(2);
    expect(statuses).toEqual(statuses.map(() => 200));
    expect(answer.body.status).toBe('queued');
  });

  it('a gone place says why: not polled in time, a reset line, or unknown', async () => {
    const { activityId, auth, place } = await lineOfOne();
    const epoch = /waiting\/([0-9a-z]+)-\d+$/.exec(place.pollUrl)![1]!;
    // Not polled for 3 × pollAfterMs (1 s here, position 0): the place is given up, and the poll says so.
    await sleep(3 * place.pollAfterMs + 1_200);
    const late = await pollOf(place.pollUrl, auth);
    expect([late.status, late.body.error]).toEqual([404, 'not_found']);
    expect(late.body.message).toMatch(/^this place in line was given up: not polled for 3 s \(3 × the pollAfterMs/);
    await sleep(1_100); // the user's poll bucket
    const other = epoch === 'zz' ? 'zy' : 'zz';
    const reset = await pollOf(`/api/activities/${activityId}/waiting/${other}-1`, auth);
    expect([reset.status, reset.body.message]).toEqual([
      404,
      'this place belongs to a waiting line that no longer exists (the line was reset); buy again',
    ]);
    await sleep(1_100);
    const unknown = await pollOf(`/api/activities/${activityId}/waiting/${epoch}-999`, auth);
    expect([unknown.status, unknown.body.message]).toEqual([
      404,
      'no such place in line (unknown, or finished more than 60 s ago); buy again',
    ]);
  });
});
