/**
 * Real buyers through a test stack's edge, as the sale page makes them: a user token (real, or with
 * the shadow claim of a rehearsal), a ticket, a purchase; and a tally of what they got.
 */
import { sign } from 'hono/jwt';
import { TEST_EDGE_SECRETS } from './edge-test-secrets.js';

export const userToken = (userId: string, shadow: boolean) =>
  sign(
    { sub: userId, exp: Math.floor(Date.now() / 1000) + 600, ...(shadow ? { shadow: true } : {}) },
    TEST_EDGE_SECRETS.USER_TOKEN_SECRET,
    'HS256',
  );

export interface Bought {
  userId: string;
  status: number;
  body: any;
}

/**
 * A ticket and a purchase through the edge at `edgeUrl`. A buyer whose click met a busy shared test
 * box (503 `unavailable`: the origin did not answer within the edge's timeout) clicks again after
 * the user gate's second, with the same Idempotency-Key, as the page does: the reservation, if the
 * first click made one, comes back as a repeat (200).
 */
export async function buy(edgeUrl: string, activityId: string, userId: string, shadow: boolean, quantity = 1) {
  const auth = `Bearer ${await userToken(userId, shadow)}`;
  const ticket = await fetch(`${edgeUrl}/api/activities/${activityId}/tickets`, {
    method: 'POST',
    headers: { authorization: auth },
  });
  if (ticket.status !== 200) return { userId, status: ticket.status, body: (await ticket.json()) as any } as Bought;
  const { purchaseUrl } = (await ticket.json()) as { purchaseUrl: string };
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`${edgeUrl}${purchaseUrl}`, {
      method: 'POST',
      headers: { authorization: auth, 'idempotency-key': `k-${userId}`, 'content-type': 'application/json' },
      body: JSON.stringify({ quantity }),
    });
    const body = (await res.json()) as any;
    if (res.status === 503 && body.error === 'unavailable' && attempt < 4) {
      await new Promise((r) => setTimeout(r, 1_100));
      continue;
    }
    // A repeat (200) of a reservation the lost answer made is the same win as its 202.
    if (res.status === 200 && body.status === 'queued') return { userId, status: 202, body } as Bought;
    // After a lost answer the edge may already answer sold_out (this client keeps no receipt
    // cookie): the buyer finds the reservation the first click made, as the contract says.
    if (attempt > 1 && res.status === 409) {
      const mine = await fetch(`${edgeUrl}/api/activities/${activityId}/reservation`, {
        headers: { authorization: auth },
      });
      if (mine.status === 200) return { userId, status: 202, body: (await mine.json()) as any } as Bought;
    }
    return { userId, status: res.status, body } as Bought;
  }
}

export async function inParallel<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const queue = [...items];
  const out: R[] = [];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) out.push(await work(next));
    }),
  );
  return out;
}

/** `<status> <error or status field>` → how many buyers got it. */
export const tally = (results: { status: number; body: any }[]) => {
  const t: Record<string, number> = {};
  for (const r of results) {
    const key = `${r.status} ${r.body.error ?? r.body.status}`;
    t[key] = (t[key] ?? 0) + 1;
  }
  return t;
};
