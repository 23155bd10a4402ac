/**
 * Per-operator admin tokens: each operator's token authenticates them, and the
 * operator's name — never the `x-admin-actor` header — is what the actor columns
 * (seckill_stock_release, seckill_deny_list) and the change log lines record. The shared ADMIN_TOKEN
 * keeps working as the operator `admin`; a claimed actor is only logged, as `claimedActor`.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../origin/platform/config.js';
import { uniqueId } from '../../helpers/ids.js';
import { startTestOrigin, TEST_SECRETS, type TestOrigin } from '../../helpers/origin.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef01';

const lines: any[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
    done();
  },
});

let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin({ ORIGIN_ROLE: 'http', ADMIN_TOKENS: `alice:${ALICE},bob:${BOB}` }, undefined, {
    log: pino({ level: 'info' }, sink),
  });
});
afterAll(() => t?.stop());

function call(method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(t.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function sale(): Promise<string> {
  const activityId = uniqueId();
  const now = Date.now();
  const res = await t.admin('POST', '/admin/activities', {
    activityId,
    skuId: uniqueId(),
    title: `operators ${activityId}`,
    stock: 10,
    initialRelease: 5,
    startsAt: new Date(now - 1000).toISOString(),
    endsAt: new Date(now + 3_600_000).toISOString(),
  });
  expect(res.status).toBe(201);
  expect((await t.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
  return activityId;
}

const denyActor = async (userId: string) =>
  ((await t.db.pool.query('SELECT actor FROM seckill_deny_list WHERE user_id = ?', [userId])) as any)[0][0].actor;
const releaseActors = async (activityId: string) =>
  (
    (await t.db.pool.query('SELECT actor FROM seckill_stock_release WHERE activity_id = ? ORDER BY id', [
      activityId,
    ])) as any
  )[0].map((r: any) => r.actor);

describe('per-operator admin tokens', () => {
  it("each operator's token records the operator's name as the actor; x-admin-actor changes nothing but a log field", async () => {
    const activityId = await sale();
    const claimed = { 'x-admin-actor': 'ceo@corp' };
    expect((await call('POST', `/admin/activities/${activityId}/releases`, ALICE, { units: 1 }, claimed)).status).toBe(
      200,
    );
    expect((await call('POST', `/admin/activities/${activityId}/releases`, BOB, { units: 1 })).status).toBe(200);
    expect(await releaseActors(activityId)).toEqual(['alice', 'bob']);

    const userId = uniqueId();
    expect((await call('PUT', `/admin/deny/${userId}`, BOB, undefined, claimed)).status).toBe(200);
    expect(await denyActor(userId)).toBe('bob');

    expect((await call('PATCH', `/admin/activities/${activityId}`, ALICE, { userRatePerSec: 4 }, claimed)).status).toBe(
      200,
    );
    const changed = lines.find((l) => l.msg === 'activity changed' && l.activityId === activityId);
    expect(changed).toMatchObject({ actor: 'alice', changes: { userRatePerSec: { from: 1, to: 4 } } });
    const notes = lines.filter((l) => l.claimedActor === 'ceo@corp');
    expect(notes.map((l) => l.actor)).toEqual(['alice', 'bob', 'alice']);
    expect(lines.filter((l) => l.actor === 'ceo@corp')).toEqual([]);
  });

  it('the shared ADMIN_TOKEN still works and records `admin`, whatever x-admin-actor says', async () => {
    const activityId = await sale();
    const res = await call(
      'POST',
      `/admin/activities/${activityId}/releases`,
      TEST_SECRETS.ADMIN_TOKEN,
      { units: 2 },
      {
        'x-admin-actor': 'ceo@corp',
      },
    );
    expect(res.status).toBe(200);
    expect(await releaseActors(activityId)).toEqual(['admin']);
    const userId = uniqueId();
    expect((await call('DELETE', `/admin/deny/${userId}`, TEST_SECRETS.ADMIN_TOKEN)).status).toBe(200);
    expect(await denyActor(userId)).toBe('admin');
  });

  it('a wrong, altered or missing token is 401 and changes nothing', async () => {
    const userId = uniqueId();
    for (const token of ['', 'alice', `${ALICE}x`, ALICE.slice(0, -1), `${ALICE},${BOB}`, `alice:${ALICE}`]) {
      const res = await call('PUT', `/admin/deny/${userId}`, token);
      expect([token, res.status, ((await res.json()) as any).error]).toEqual([token, 401, 'unauthenticated']);
    }
    const [rows] = (await t.db.pool.query('SELECT * FROM seckill_deny_list WHERE user_id = ?', [userId])) as any;
    expect(rows).toEqual([]);
  });
});

describe('ADMIN_TOKENS configuration', () => {
  it('parses name:token pairs; with ADMIN_TOKENS alone there is no shared (dev) token', () => {
    const only = loadConfig({ ADMIN_TOKENS: `alice:${ALICE}, bob:${BOB}` });
    expect(only.ADMIN_TOKEN).toBeUndefined();
    expect(only.ADMIN_OPERATORS.map((o) => o.name)).toEqual(['alice', 'bob']);
    const both = loadConfig({ ADMIN_TOKEN: 'x'.repeat(20), ADMIN_TOKENS: `alice:${ALICE}` });
    expect(both.ADMIN_OPERATORS.map((o) => o.name)).toEqual(['admin', 'alice']);
    expect(loadConfig({}).ADMIN_OPERATORS).toEqual([{ name: 'admin', token: 'dev-admin-token' }]);
  });

  it('refuses a malformed list, naming ADMIN_TOKENS', () => {
    for (const [list, why] of [
      [`alice${ALICE}`, /name:token/],
      [`al ice:${ALICE}`, /name:token/],
      [`alice:short`, /alice's token must be at least 16 characters/],
      [`alice:${ALICE},alice:${BOB}`, /alice is listed twice/],
      [`alice:${ALICE},bob:${ALICE}`, /bob's token is also another operator's/],
      [`admin:${ALICE}`, /"admin" is the shared ADMIN_TOKEN's name/],
    ] as const)
      expect(() => loadConfig({ ADMIN_TOKENS: list })).toThrow(new RegExp(`ADMIN_TOKENS: .*${why.source}`));
  });

  it('on a non-loopback HOST every operator token needs 32 characters', () => {
    const secrets = {
      HOST: '0.0.0.0',
      EDGE_ORIGIN_SECRET: 'b'.repeat(32),
      PAYMENT_WEBHOOK_SECRET: 'c'.repeat(32),
      METRICS_TOKEN: 'd'.repeat(32),
      DRAW_SECRET: 'e'.repeat(32),
    };
    expect(() => loadConfig({ ...secrets, ADMIN_TOKENS: `alice:${'a'.repeat(32)},bob:${'b'.repeat(31)}` })).toThrow(
      /ADMIN_TOKENS: bob's token must be at least 32 characters when HOST=0.0.0.0/,
    );
    expect(loadConfig({ ...secrets, ADMIN_TOKENS: `alice:${'a'.repeat(32)}` }).ADMIN_OPERATORS).toHaveLength(1);
  });
});
