/**
 * REDIS_WAIT_REPLICAS (docs/design.md §10 durability): a reservation is answered 202 only after WAIT saw it
 * on that many replicas. A primary without the replicas answers 503 `unavailable` — the reservation
 * is not promised, yet the user's lookup tells the truth and a retry with the same key answers 200
 * once it is confirmed. With a live replica the same call is a plain 202.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promisify } from 'node:util';
import { freePort } from '../../../support/processes.js';
import { scalar } from '../../helpers/db.js';
import { counterValue } from '../../helpers/drill.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';
import { startPersistentRedis, type PersistentRedis } from '../../helpers/redis-server.js';

const run = promisify(execFile);
let primary: PersistentRedis;
let replica: ChildProcess | null = null;
let replicaPort = 0;
let t: TestOrigin;

beforeAll(async () => {
  primary = await startPersistentRedis('everysec');
  t = await startTestOrigin({
    REDIS_URL: primary.url,
    REDIS_WAIT_REPLICAS: '1',
    // Generous: a live replica answers WAIT at once; only the replica-less case waits it out. A
    // short timeout would make the live-replica case depend on this busy machine's speed.
    REDIS_WAIT_TIMEOUT_MS: '2000',
    REDIS_COMMAND_TIMEOUT_MS: '5000',
  });
}, 60_000);

afterAll(async () => {
  await t?.stop();
  if (replica && replica.exitCode === null) {
    const exited = new Promise((r) => replica!.once('exit', r));
    replica.kill('SIGTERM');
    await exited;
  }
  await primary?.stop();
});

/** How many WAIT commands the primary has run (its command statistics). */
const waitCalls = async (): Promise<number> => {
  const { stdout } = await run('redis-cli', ['-p', String(primary.port), 'INFO', 'commandstats']);
  return Number(/cmdstat_wait:calls=(\d+)/.exec(stdout)?.[1] ?? 0);
};
const user = () => String(8_000_000_000 + randomInt(0, 1_000_000_000));
const reserve = async (activityId: string, userId: string) => {
  const res = await t.internal('POST', '/internal/reserve', {
    activityId,
    userId,
    quantity: 1,
    requestId: `w-${userId}`,
  });
  return { status: res.status, body: (await res.json()) as any };
};

describe('REDIS_WAIT_REPLICAS=1', () => {
  it('without a replica: 503 unavailable, the lookup finds the reservation, it settles; a retry stays unconfirmed', async () => {
    const { activityId } = await t.sale({ stock: 5, acceptReplicaRisk: true });
    const u = user();
    expect(await reserve(activityId, u)).toMatchObject({ status: 503, body: { error: 'unavailable' } });
    expect(await counterValue(t, 'seckill_reserve_unconfirmed_total', {})).toBeGreaterThanOrEqual(1);
    // Not promised, but not hidden either: the lookup reads the holder, then the order.
    const lookup = await waitFor(
      async () => {
        const res = await t.internal('GET', `/internal/activities/${activityId}/reservation?userId=${u}`);
        return { status: res.status, body: (await res.json()) as any };
      },
      (r) => r.status === 200 && r.body.status === 'ordered',
    );
    expect(
      await scalar(
        t.db.pool,
        'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND user_id = ? AND reservation_id = ?',
        [activityId, u, lookup.body.reservationId],
      ),
    ).toBe(1);
    // The repeat is still unconfirmed: no replica has it.
    expect(await reserve(activityId, u)).toMatchObject({ status: 503, body: { error: 'unavailable' } });
  });

  it('a burst without a replica: every reservation unconfirmed in about one WAIT timeout, none lost', async () => {
    const { activityId } = await t.sale({ stock: 50, acceptReplicaRisk: true });
    const users = Array.from({ length: 30 }, user);
    const waitsBefore = await waitCalls();
    const answers = await Promise.all(users.map((u) => reserve(activityId, u)));
    expect(answers.map((a) => a.status)).toEqual(users.map(() => 503));
    // Reservations asked for together wait behind one WAIT (origin/redis/wait-groups.ts), not one
    // 2 s timeout each after the other (30 × 2 s): the primary ran a handful of WAITs, not 30 (those
    // that arrive while one WAIT runs share the next).
    expect((await waitCalls()) - waitsBefore).toBeLessThanOrEqual(7);
    // Written on the primary although not promised: each is settled, none twice, none lost.
    await waitFor(
      () => scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
      (n) => n === 30,
    );
    expect(
      await scalar(t.db.pool, 'SELECT COUNT(DISTINCT user_id) FROM seckill_order WHERE activity_id = ?', [activityId]),
    ).toBe(30);
  });

  it('with a live replica: 202, and the repeat 200 with the same reservation', async () => {
    replicaPort = await freePort();
    replica = spawn(
      'redis-server',
      [
        '--port',
        String(replicaPort),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        mkdtempSync(join(tmpdir(), 'seckill-replica-')), // a full sync writes dump.rdb here, not in the repository
        '--replicaof',
        '127.0.0.1',
        String(primary.port),
      ],
      { stdio: 'ignore' },
    );
    await waitFor(
      () =>
        run('redis-cli', ['-p', String(replicaPort), 'INFO', 'replication']).then(
          (r) => r.stdout,
          () => '',
        ),
      (info) => info.includes('master_link_status:up'),
    );
    const { activityId } = await t.sale({ stock: 5, acceptReplicaRisk: true });
    const u = user();
    const first = await reserve(activityId, u);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const again = await reserve(activityId, u);
    expect(again).toMatchObject({ status: 200, body: { reservationId: first.body.reservationId } });
  });

  it('with a live replica, a burst: every reservation 202, stock exact, far fewer WAITs than reservations', async () => {
    const stock = 150;
    const { activityId } = await t.sale({ stock, acceptReplicaRisk: true });
    const users = Array.from({ length: 200 }, user);
    const waitsBefore = await waitCalls();
    const answers = await Promise.all(users.map((u) => reserve(activityId, u)));
    const waits = (await waitCalls()) - waitsBefore;
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(stock);
    expect(statuses.filter((s) => s !== 202).every((s) => s === 409)).toBe(true);
    // One WAIT per group of reservations asked for while the previous group was out; one per
    // reservation before (origin/redis/wait-groups.ts).
    console.log(`${answers.length} reservations (${stock} granted) confirmed by ${waits} WAIT calls`);
    expect(waits).toBeGreaterThan(0);
    expect(waits).toBeLessThan(answers.length / 2);
    await waitFor(
      () => scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
      (n) => n === stock,
    );
  });

  it('a primary that lost its scripts (SCRIPT FLUSH, as after a restart): a burst is still every one 202', async () => {
    const { activityId } = await t.sale({ stock: 40, acceptReplicaRisk: true });
    await run('redis-cli', ['-p', String(primary.port), 'SCRIPT', 'FLUSH']);
    const users = Array.from({ length: 40 }, user);
    const answers = await Promise.all(users.map((u) => reserve(activityId, u)));
    expect(answers.map((a) => a.status)).toEqual(users.map(() => 202));
    expect(new Set(answers.map((a) => a.body.reservationId)).size).toBe(40);
  });
});
