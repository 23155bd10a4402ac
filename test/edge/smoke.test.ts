import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { BASE, openActivity, purchase, purchaseUrlFor, newUserId } from './support.js';

describe('smoke', () => {
  it('a buyer gets a ticket and a queued reservation', async () => {
    const activityId = await openActivity();
    const user = newUserId();
    const url = await purchaseUrlFor(activityId, user);
    const res = await purchase(url, user);
    expect(res.status).toBe(202);
    const res2 = await SELF.fetch(`${BASE}/api/activities/${activityId}`);
    expect(res2.status).toBe(200);
  });
});
