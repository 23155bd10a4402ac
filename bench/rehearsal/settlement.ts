/**
 * After the crowd: wait until every reservation is settled (orders + dead letters cover what the
 * edge granted, Stream pending and undelivered 0), optionally until unpaid orders have timed out,
 * then read the verdict's facts from MySQL and the origin's reconciliation.
 */
import mysql from 'mysql2/promise';
import type { Recorder } from './recorder.js';
import { one, rows } from '../../origin/platform/db/rows.js';
import type { Reconciliation } from '../../origin/recovery/reconcile.js';
import { adminRequest } from './stack.js';
import { ledgerOf, type Ledger } from '../../origin/orders/ledger.js';

export function openPool(o: RehearsalOptions): mysql.Pool {
  return mysql.createPool({ uri: o.mysqlUrl, connectionLimit: 2, supportBigNumbers: true, bigNumberStrings: true });
}
import type { RehearsalOptions } from './options.js';

export interface SettlementFacts {
  settled: boolean;
  /** ms from the last granted reservation to everything settled (null when it never settled). */
  settleMs: number | null;
  timeoutsWaited: boolean;
  orders: { total: number; pending: number; paid: number; timeout: number; liveUnits: number; units: number };
  deadLetters: number;
  usersWithTwoOrders: number;
  /** 202 reservations with neither an order nor a dead letter. */
  lost: string[];
  /** Orders the driver never saw a 202 for (its answer was lost on the way): not an error, reported. */
  ordersWithoutAnswer: number;
  reconciliation: {
    ok: boolean;
    checks: { name: string; expected: number; actual: number; ok: boolean }[];
    figures: Record<string, number | null>;
  };
}

/** A row of COUNT(*)/SUM() figures: mysql2 returns them as numbers or decimal strings. */
type Count<K extends string> = Record<K, number | string>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls how far settlement is (orders and dead letters in MySQL, Stream pending and lag from /metrics). */
export class SettlementWatch {
  /** [ms since the sale's start, orders in MySQL] every ~500 ms, for the report's chart. */
  readonly samples: [number, number][] = [];
  /** When everything granted so far was last seen settled (null while something is outstanding). */
  settledAt: number | null = null;
  last = { orders: 0, dead: 0, pending: -1, lag: -1 };
  private stopped = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly pool: mysql.Pool,
    private readonly originUrl: string,
    private readonly activityId: string,
    private readonly rec: Recorder,
    /** The sale's tables: a shadow sale's orders are in the shadow tables (origin/orders/ledger.ts). */
    private readonly ledger: Ledger = ledgerOf({ shadow: false }),
    /** METRICS_TOKEN of an existing origin's /metrics. */
    private readonly metricsToken?: string,
  ) {}

  async probe(): Promise<void> {
    const row = (await one<Count<'orders' | 'dead'>>(
      this.pool.query(
        `SELECT (SELECT COUNT(*) FROM ${this.ledger.order} WHERE activity_id = ?) AS orders,
                (SELECT COUNT(*) FROM seckill_dead_letter WHERE activity_id = ?) AS dead`,
        [this.activityId, this.activityId],
      ),
    ))!;
    const metrics = await (
      await fetch(`${this.originUrl}/metrics`, {
        headers: this.metricsToken ? { authorization: `Bearer ${this.metricsToken}` } : {},
      })
    ).text();
    const gauge = (name: string) => {
      const m = new RegExp(`^${name}\\{activity="${this.activityId}"\\} (\\S+)$`, 'm').exec(metrics);
      return m ? Number(m[1]) : -1;
    };
    // A shadow sale's Stream is in one gauge of its own (undelivered + unacknowledged), never the real ones.
    const shadowBacklog = this.ledger.shadow ? gauge('seckill_shadow_stream_backlog') : null;
    this.last = {
      orders: Number(row.orders),
      dead: Number(row.dead),
      pending: shadowBacklog ?? gauge('seckill_stream_pending'),
      // (-1: the gauge is not there yet; 0 once it is, the backlog being all in `pending`.)
      lag: shadowBacklog === null ? gauge('seckill_stream_lag') : shadowBacklog < 0 ? -1 : 0,
    };
    const now = Date.now();
    this.samples.push([now - this.rec.startsAt, this.last.orders]);
    const done =
      this.last.orders + this.last.dead >= this.rec.reservations.size && this.last.pending === 0 && this.last.lag === 0;
    if (!done) this.settledAt = null;
    else this.settledAt ??= now;
  }

  start(everyMs = 500): void {
    this.loop = (async () => {
      while (!this.stopped) {
        await this.probe().catch(() => undefined);
        await sleep(everyMs);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

export async function settle(
  o: RehearsalOptions,
  originUrl: string,
  activityId: string,
  rec: Recorder,
  watch: SettlementWatch,
  pool: mysql.Pool,
  onWait: (what: string) => void,
): Promise<SettlementFacts> {
  const q = <T>(sql: string, args: unknown[]) => rows<T>(pool.query(sql, args));
  const ledger = ledgerOf(o);
  const granted = rec.reservations.size;
  const deadline = Date.now() + o.settleTimeoutMs;
  await watch.stop();
  for (;;) {
    await watch.probe();
    const l = watch.last;
    onWait(`settling: orders ${l.orders}/${granted}, Stream pending ${l.pending}, undelivered ${l.lag}`);
    if (watch.settledAt !== null || Date.now() > deadline) break;
    await sleep(200);
  }
  const settled = watch.settledAt !== null;
  const settleMs = settled ? Math.max(0, watch.settledAt! - (rec.lastReservedAt ?? watch.settledAt!)) : null;

  // With a short payment timeout, wait for the unpaid orders to time out and their refills to reach Redis.
  let timeoutsWaited = false;
  if (settled && o.paymentTimeoutSeconds <= 120) {
    const until = Date.now() + o.paymentTimeoutSeconds * 1000 + 30_000;
    for (;;) {
      const [row] = await q<Count<'pending' | 'outbox'>>(
        `SELECT (SELECT COUNT(*) FROM ${ledger.order} WHERE activity_id = ? AND status = 0) AS pending,
                  (SELECT COUNT(*) FROM ${ledger.refillOutbox} WHERE activity_id = ? AND status = 0) AS outbox`,
        [activityId, activityId],
      );
      onWait(`waiting for payment timeouts: ${row?.pending} pending orders, ${row?.outbox} refills to sync`);
      if (Number(row?.pending) === 0 && Number(row?.outbox) === 0) {
        timeoutsWaited = true;
        break;
      }
      if (Date.now() > until) break;
      await sleep(500);
    }
  }

  const [counts] = (await q<Count<'total' | 'units' | 'pending' | 'paid' | 'timeout' | 'live'>>(
    `SELECT COUNT(*) AS total, COALESCE(SUM(quantity), 0) AS units,
              COALESCE(SUM(status = 0), 0) AS pending, COALESCE(SUM(status = 1), 0) AS paid,
              COALESCE(SUM(status = 2), 0) AS timeout, COALESCE(SUM(CASE WHEN status <> 2 THEN quantity END), 0) AS live
         FROM ${ledger.order} WHERE activity_id = ?`,
    [activityId],
  )) as [Count<'total' | 'units' | 'pending' | 'paid' | 'timeout' | 'live'>];
  const [dupes] = (await q<Count<'n'>>(
    `SELECT COUNT(*) AS n FROM (SELECT user_id FROM ${ledger.order} WHERE activity_id = ? GROUP BY user_id HAVING COUNT(*) > 1) d`,
    [activityId],
  )) as [Count<'n'>];
  const [dead] = (await q<Count<'n'>>('SELECT COUNT(*) AS n FROM seckill_dead_letter WHERE activity_id = ?', [
    activityId,
  ])) as [Count<'n'>];

  // Every 202 must have become an order or a dead letter.
  const ids = [...rec.reservations.keys()];
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 1000) {
    const batch = ids.slice(i, i + 1000);
    const settledIds = await q<{ reservation_id: string }>(
      `SELECT reservation_id FROM ${ledger.order} WHERE reservation_id IN (?)
         UNION SELECT reservation_id FROM seckill_dead_letter WHERE reservation_id IN (?)`,
      [batch, batch],
    );
    for (const row of settledIds) found.add(row.reservation_id);
  }
  const lost = ids.filter((id) => !found.has(id));
  const reconciliation = await adminRequest<Reconciliation>(
    o,
    originUrl,
    'GET',
    `/admin/activities/${activityId}/reconciliation`,
  );
  return {
    settled,
    settleMs,
    timeoutsWaited,
    orders: {
      total: Number(counts.total),
      units: Number(counts.units),
      pending: Number(counts.pending),
      paid: Number(counts.paid),
      timeout: Number(counts.timeout),
      liveUnits: Number(counts.live),
    },
    deadLetters: Number(dead.n),
    usersWithTwoOrders: Number(dupes.n),
    lost,
    ordersWithoutAnswer: Math.max(0, Number(counts.total) - (ids.length - lost.length)),
    reconciliation: { ok: reconciliation.ok, checks: reconciliation.checks, figures: reconciliation.figures },
  };
}
