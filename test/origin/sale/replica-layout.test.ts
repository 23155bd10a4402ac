/**
 * The replica rule (origin/sale/replica-layout.ts) on a real Redis Cluster of 3 masters with 1
 * replica each and REDIS_WAIT_REPLICAS=1 — the layout where one failover
 * leaves the promoted primary with no replica, so WAIT never confirms and its units cannot be sold.
 * Warm-up says so and keeps the sale closed unless the operator accepts the risk; after a master is
 * SIGKILLed (and not restarted) the failover watch logs the failover, alerts on the bucket short of
 * replicas with its units, shows it in the gauges and as a banner in the console (Chromium) beside
 * the failover that closed and reopened the sale, and the public units left exclude it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityKeys } from '../../../origin/redis/keys.js';
import { counterValue } from '../../helpers/drill.js';
import { launchBrowser } from '../../helpers/browser.js';
import { openConsole, readBanner } from '../../helpers/console-page.js';
import { startTestOrigin, TEST_SECRETS, waitFor, type TestOrigin } from '../../helpers/origin.js';
import { startLocalCluster, type LocalCluster } from '../../helpers/redis-cluster.js';

const BUCKETS = 3;
const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/console/', import.meta.url));
let cluster: LocalCluster;
let t: TestOrigin;
const lines: Record<string, any>[] = [];

beforeAll(async () => {
  cluster = await startLocalCluster({ masters: 3, replicas: 1, nodeTimeoutMs: 2000 });
  t = await startTestOrigin(
    {
      REDIS_CLUSTER_NODES: cluster.nodes,
      REDIS_WAIT_REPLICAS: '1',
      REDIS_WAIT_TIMEOUT_MS: '200',
      FAILOVER_POLL_MS: '100',
      REDIS_COMMAND_TIMEOUT_MS: '2000',
      REDIS_BREAKER_OPEN_MS: '100',
    },
    undefined,
    { log: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }) },
  );
}, 180_000);
afterAll(async () => {
  try {
    await t?.stop();
  } finally {
    await cluster?.stop(); // even when the origin's stop failed: no redis-server left behind
  }
}, 120_000);

const gauge = (name: string, labels: Record<string, string> = {}) => counterValue(t, name, labels);
const patchState = (activityId: string, query = '') =>
  t.admin('PATCH', `/admin/activities/${activityId}${query}`, { state: 'open' });

describe('3 masters with 1 replica each, REDIS_WAIT_REPLICAS=1', () => {
  it('warm-up says one failover would stall every bucket and keeps the sale closed until the operator accepts it', async () => {
    const { activityId } = await t.sale({ stock: 30, stockBuckets: BUCKETS });
    // t.sale warmed it without the override: the sale did not open.
    const snapshot = await (await t.admin('GET', `/admin/activities/${activityId}`)).json();
    expect(snapshot).toMatchObject({ state: 'paused', publicState: 'paused' });
    expect(lines.some((l) => l.alert === 'replica_layout_unsafe' && l.activityId === activityId)).toBe(true);

    const verification = (await (await t.admin('GET', `/admin/activities/${activityId}/warmup`)).json()) as any;
    expect(verification.checks).toContainEqual({
      name: 'redis.no_bucket_stalls_on_one_failover',
      expected: 0,
      actual: BUCKETS,
      ok: false,
    });
    expect(verification.replicas).toMatchObject({
      waitReplicas: 1,
      stallsOnOneFailover: [0, 1, 2],
      shortNow: [],
      acceptedBy: null,
    });
    for (const b of verification.replicas.buckets) expect(b).toMatchObject({ inSync: 1, units: 10 });
    expect(verification.replicas.verdict).toMatch(
      /one failover would stall bucket 0 .*give each primary at least 2 replicas/,
    );

    // Opening without the flag is refused and changes nothing; a bad flag is a 400.
    const refused = await patchState(activityId);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      error: 'conflict',
      message: expect.stringMatching(/acceptReplicaRisk=true/),
    });
    expect((await patchState(activityId, '?acceptReplicaRisk=yes')).status).toBe(400);
    expect(await (await t.admin('GET', `/admin/activities/${activityId}`)).json()).toMatchObject({ state: 'paused' });

    // With the flag it opens, the acceptance is recorded with who gave it, and the check passes.
    const opened = await t.admin('PATCH', `/admin/activities/${activityId}?acceptReplicaRisk=true`, { state: 'open' });
    expect(opened.status).toBe(200);
    expect(await opened.json()).toMatchObject({ state: 'open', publicState: 'open' });
    const after = (await (await t.admin('GET', `/admin/activities/${activityId}/warmup`)).json()) as any;
    expect(after.checks).toContainEqual({
      name: 'redis.no_bucket_stalls_on_one_failover',
      expected: BUCKETS,
      actual: BUCKETS,
      ok: true,
    });
    expect(after.replicas.acceptedBy).toBe('admin');

    // The gauges: the configured WAIT and 1 replica in sync on each primary under the sale.
    await waitFor(
      () => gauge('seckill_redis_wait_replicas'),
      (v) => v === 1,
    );
    for (const b of verification.replicas.buckets)
      await waitFor(
        () => gauge('seckill_redis_replicas_in_sync', { node: b.node }),
        (v) => v === 1,
      );
  }, 120_000);

  it('a warm-up with the override opens a sale an earlier warm-up paused for this rule (the scheduled one may run first)', async () => {
    const { activityId } = await t.sale({ stock: 6, stockBuckets: BUCKETS });
    expect(await (await t.admin('GET', `/admin/activities/${activityId}`)).json()).toMatchObject({ state: 'paused' });
    const warmed = await t.admin('POST', `/admin/activities/${activityId}/warmup?acceptReplicaRisk=true`);
    expect(warmed.status).toBe(200);
    expect(await warmed.json()).toMatchObject({
      state: 'open',
      publicState: 'open',
      replicas: { opens: true, acceptedBy: 'admin' },
    });
  });

  it('a master SIGKILLed a moment into a storm and not restarted: the failover is logged, the bucket short of replicas alerted with its units, the units left exclude it', async () => {
    const STOCK = 3000;
    const { activityId, skuId } = await t.sale({ stock: STOCK, stockBuckets: BUCKETS, acceptReplicaRisk: true });
    // The storm: new buyers all the time, every bucket's home users among them. Clicks homed on the
    // promoted primary each run a WAIT that cannot be satisfied — the load under which the watch
    // used to read "cannot tell" for that bucket and log nothing.
    let storming = true;
    let user = 5_000_000_000 + Math.floor(Math.random() * 1e6) * 1000;
    const answers: Record<number, number> = {};
    const storm = Promise.all(
      Array.from({ length: 48 }, async () => {
        while (storming) {
          const u = String(user++);
          const res = await t
            .internal('POST', '/internal/reserve', { activityId, userId: u, quantity: 1, requestId: `s-${u}` })
            .catch(() => null);
          answers[res?.status ?? 0] = (answers[res?.status ?? 0] ?? 0) + 1;
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 1000));
    const master = await cluster.masterOf(activityKeys(activityId, skuId, 0, BUCKETS).stock);
    // Every bucket on that master (several may share one).
    const onMaster: number[] = [];
    for (let b = 0; b < BUCKETS; b++)
      if ((await cluster.masterOf(activityKeys(activityId, skuId, b, BUCKETS).stock)) === master) onMaster.push(b);
    await waitFor(
      () => gauge('seckill_redis_replicas_in_sync', { node: `127.0.0.1:${master}` }),
      (v) => v === 1,
    );
    // The watch has read this sale's primaries (the per-sale gauge is set in the same round, after them).
    await waitFor(
      async () => (await t.origin.parts.metrics.bucketShortOfReplicasUnits.get()).values,
      (values) => values.some((v) => v.labels.activity === activityId),
      30_000,
      50,
    );
    const detectedBefore = await counterValue(t, 'seckill_failover_steps_total', { step: 'detected' });
    const reopenedBefore = await counterValue(t, 'seckill_failover_steps_total', { step: 'reopened' });

    let promoted: number;
    let alert: Record<string, any> | undefined;
    try {
      cluster.signal(master, 'SIGKILL');
      promoted = await waitFor(
        () => cluster.masterOf(activityKeys(activityId, skuId, 0, BUCKETS).stock).catch(() => master),
        (port) => port !== master,
        60_000,
        100,
      );
      // The watch saw the primary change and closed, recovered and reopened the sale.
      await waitFor(
        () => counterValue(t, 'seckill_failover_steps_total', { step: 'detected' }),
        (n) => n > detectedBefore,
        60_000,
        100,
      );
      await waitFor(
        async () =>
          lines.filter(
            (l) =>
              l.activityId === activityId &&
              String(l.msg).startsWith('failover: the Redis primary under this sale changed'),
          ).length,
        (n) => n > 0,
      );
      // The promoted primary has no replica: the buckets it serves are short now, named with their units.
      alert = await waitFor(
        async () =>
          lines.find(
            (l) =>
              l.alert === 'bucket_short_of_replicas' &&
              l.activityId === activityId &&
              l.buckets.every((b: any) => b.node !== null),
          ),
        (l) => l !== undefined,
        60_000,
        100,
      );
    } catch (err) {
      // What the watch said since the kill, to tell a slow election from a watch that stopped asking.
      const said = lines
        .filter((l) => /failover|replica|redis/i.test(String(l.msg)) || l.err !== undefined)
        .slice(-30)
        .map((l) => `${l.time} ${l.msg}${l.err ? ` (${l.err})` : ''}`);
      throw new Error(`${(err as Error).message}\nthe origin's failover lines:\n${said.join('\n')}`, { cause: err });
    } finally {
      storming = false; // on a failure too: a storm left running holds the origin's stop in afterAll
      await storm;
    }
    console.log(`replica layout drill: answers during the storm ${JSON.stringify(answers)}`);
    expect(alert!.buckets.map((b: any) => b.bucket)).toEqual(onMaster);
    for (const b of alert!.buckets) expect(b).toMatchObject({ node: `127.0.0.1:${promoted}`, inSync: 0 });
    expect(alert!.units).toBe(alert!.buckets.reduce((s: number, b: any) => s + b.units, 0));
    expect(alert!.units).toBeGreaterThan(0);
    // What the stalled buckets hold now (nothing can take units from them: no WAIT confirms there).
    // The gauge follows what each stalled bucket holds (read again until they agree: recovery and
    // settlement may still move units).
    const sale = await t.origin.parts.catalog.resolve(activityId);
    for (const b of onMaster)
      await waitFor(
        async () => [
          await gauge('seckill_bucket_short_of_replicas_units', { activity: activityId, bucket: String(b) }),
          (await t.origin.parts.redis.sales.bucketStocks(sale))[b],
        ],
        ([g, held]) => g === held,
        30_000,
        200,
      );
    expect(await gauge('seckill_redis_replicas_in_sync', { node: `127.0.0.1:${promoted}` })).toBe(0);

    // Recovery proved the sale on the promoted primary and reopened it (no WAIT is needed for that).
    await waitFor(
      () => counterValue(t, 'seckill_failover_steps_total', { step: 'reopened' }),
      (n) => n > reopenedBefore,
      90_000,
      100,
    );

    // The operator sees both in the console, in words: the bucket short of replicas with its units
    // and the next step, and the failover that closed the sale and reopened it.
    const browser = await launchBrowser('the console banners of a real failover');
    try {
      const tab = await openConsole(browser, t.url, TEST_SECRETS.ADMIN_TOKEN, `#/sale/${activityId}`);
      const text = await readBanner(
        tab.page,
        'short_replicas',
        /^Critical: [\d,]+ units? cannot be sold: their bucket’s Redis primary has too few replicas in sync \(bucket \d+: [\d,]+ units?.*\)\. Since \d\d:\d\d:\d\d\. Next: redis-cli/,
        60_000,
      );
      for (const b of onMaster) expect(text).toContain(`bucket ${b}:`);
      await readBanner(
        tab.page,
        'failover_reopened',
        /^Notice: Reopened after a Redis failover: it was closed for [\d.]+ s\./,
        30_000,
      );
      mkdirSync(ARTIFACTS, { recursive: true });
      await tab.page.screenshot({ path: join(ARTIFACTS, 'banner-short-of-replicas.png'), fullPage: true });
      expect(tab.errors).toEqual([]);
    } finally {
      await browser.close();
    }

    // Public state stays honest: units held where nobody can buy them are not "left" (both read
    // again until they agree).
    const snapshot: any = await waitFor(
      async () => {
        const snap = (await (await t.admin('GET', `/admin/activities/${activityId}`)).json()) as any;
        const total = Number(await t.origin.parts.redis.sales.stock(sale));
        const stocks = await t.origin.parts.redis.sales.bucketStocks(sale);
        const stranded = onMaster.reduce((sum, b) => sum + (stocks[b] ?? 0), 0);
        return { ...snap, expectedLeft: total - stranded, stranded };
      },
      (x: any) => x.units?.left === x.expectedLeft && x.stranded > 0,
      30_000,
      200,
    );
    const left = snapshot.expectedLeft;
    expect(snapshot.publicState).toBe(left > 0 ? 'open' : 'paused');
  }, 240_000);
});
