/**
 * Durability drills (test/origin/recovery/drill-*.test.ts): a storm of users buying through real origin
 * processes while a Redis process is killed, and the guarantees checked afterwards against MySQL.
 */
import { expect } from 'vitest';
import { signEdgeRequest } from '../../contract/signing.js';
import { scalar, type TestDatabase } from './db.js';
import { TEST_SECRETS, waitFor, type TestOrigin } from './origin.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Answer {
  status: number;
  body: any;
}

/** A signed call as the edge makes it; a network error comes back as status 0. */
export async function signedCall(url: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
  const text = body === undefined ? '' : JSON.stringify(body);
  const headers = await signEdgeRequest(TEST_SECRETS.EDGE_ORIGIN_SECRET, { method, pathWithQuery: path, body: text });
  try {
    const res = await fetch(url + path, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: method === 'POST' ? text : undefined,
    });
    return { status: res.status, body: await res.json().catch(() => ({})) };
  } catch (err) {
    return { status: 0, body: { error: (err as Error).message } };
  }
}

export interface StormResult {
  /** userId → the reservation an answer 202/200 promised (the last one; the same each time, checked). */
  acknowledged: Map<string, string>;
  /** Users answered sold out / insufficient stock. */
  refused: Set<string>;
  /** Answers by `status code`, for the report. */
  tally: Record<string, number>;
  /** When the first 202/200 after `since()` came (ms), if any (the sale sold again after it reopened). */
  firstAckAfter: number | null;
}

/**
 * Every user buys one unit with one Idempotency-Key, retrying a 503 (or a lost connection) after a
 * short pause, as a patient buyer would, until a final answer or `deadlineMs`. A user promised two
 * different reservations fails the test at once.
 */
export async function storm(opts: {
  users: string[];
  width: number;
  reserve: (userId: string, requestId: string) => Promise<Answer>;
  deadlineMs: number;
  /** The instant after which the first acknowledgement is recorded (the reopen). */
  since?: () => number | null;
}): Promise<StormResult> {
  const result: StormResult = { acknowledged: new Map(), refused: new Set(), tally: {}, firstAckAfter: null };
  const deadline = Date.now() + opts.deadlineMs;
  const queue = [...opts.users];
  await Promise.all(
    Array.from({ length: opts.width }, async () => {
      for (let userId = queue.shift(); userId !== undefined; userId = queue.shift()) {
        for (;;) {
          const r = await opts.reserve(userId, `drill-${userId}`);
          const key = `${r.status} ${r.body.error ?? r.body.status ?? ''}`;
          result.tally[key] = (result.tally[key] ?? 0) + 1;
          if (r.status === 202 || r.status === 200) {
            const before = result.acknowledged.get(userId);
            if (before !== undefined && before !== r.body.reservationId)
              throw new Error(`user ${userId} was promised ${before} and then ${r.body.reservationId}`);
            result.acknowledged.set(userId, r.body.reservationId);
            const since = opts.since?.();
            if (since && result.firstAckAfter === null && Date.now() > since) result.firstAckAfter = Date.now();
            break;
          }
          if (r.status === 409) {
            result.refused.add(userId);
            break;
          }
          if (r.status !== 503 && r.status !== 0) throw new Error(`unexpected answer for ${userId}: ${key}`);
          if (Date.now() > deadline) throw new Error(`user ${userId} still unanswered at the deadline (${key})`);
          await sleep(50 + Math.random() * 50);
        }
      }
    }),
  );
  return result;
}

/**
 * The drill's guarantees: every acknowledged reservation is exactly one order (its own id, its own
 * user); no user has two orders; orders ≤ stock; no order for a user never acknowledged; and
 * reconciliation is ok.
 */
export async function expectGuarantees(
  t: TestOrigin,
  db: TestDatabase,
  activityId: string,
  stock: number,
  acked: Map<string, string>,
) {
  // The MariaDB is shared with other test runs: a refused connection ("Too many connections") is retried.
  await waitFor(
    () => scalar(db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]).catch(() => -1),
    (n) => n >= acked.size,
    180_000,
    200,
  );
  await sleep(1_000); // anything still in flight would show now
  const [rows] = (await db.pool.query('SELECT reservation_id, user_id FROM seckill_order WHERE activity_id = ?', [
    activityId,
  ])) as any;
  const orderOf = new Map<string, string>(rows.map((r: any) => [String(r.reservation_id), String(r.user_id)]));
  for (const [userId, reservationId] of acked)
    expect(orderOf.get(reservationId), `order of ${reservationId}`).toBe(userId);
  expect(rows.length).toBe(acked.size);
  expect(new Set(rows.map((r: any) => String(r.user_id))).size).toBe(rows.length);
  expect(rows.length).toBeLessThanOrEqual(stock);
  const rec = await waitFor(
    async () =>
      (await (await t.admin('GET', `/admin/activities/${activityId}/reconciliation`)).json().catch(() => ({}))) as any,
    (r) => r.ok === true,
    60_000,
    500,
  );
  expect(rec.ok).toBe(true);
}

/** A counter's value for one label set in an origin's registry. */
export async function counterValue(t: TestOrigin, name: string, labels: Record<string, string>): Promise<number> {
  const metric = t.origin.parts.metrics.registry.getSingleMetric(name);
  const values = ((await metric?.get()) as any)?.values ?? [];
  const hit = values.find((v: any) => Object.entries(labels).every(([k, want]) => v.labels[k] === want));
  return hit ? Number(hit.value) : 0;
}
