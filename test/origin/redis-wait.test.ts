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
import { freePort } from '../../support/processes.js';
import { scalar } from '../helpers/db.js';
import { counterValue } from '../helpers/drill.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../helpers/origin.js';
import { startPersistentRedis, type PersistentRedis } from '../helpers/redis-server.js';

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
    expect(first.status).toBe(202);
    const again = await reserve(activityId, u);
    expect(again).toMatchObject({ status: 200, body: { reservationId: first.body.reservationId } });
  });
});
