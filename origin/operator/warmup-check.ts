/**
 * Warm-up verification (docs/design.md §10, the seeds: "the interface returns the keys and values it
 * warmed"): what Redis holds for a sale, compared with MySQL. `GET /admin/activities/:id/warmup`
 * and the scheduled verification (WarmupJob) both use it.
 *
 * The stock check is the reconciliation's Redis equation, so it also holds once selling began:
 *   stock = initial − not released − (issued − released − refilled).
 * With REDIS_WAIT_REPLICAS > 0 it also applies the replica rule (replica-layout.ts): no bucket's
 * primary may have REDIS_WAIT_REPLICAS or fewer replicas in sync (one failover would stall it)
 * unless an operator accepted that risk; `replicas` shows every bucket's primary and count.
 */
import { eligibilityField } from '../access/sale-rules.js';
import { CONSUMER_GROUP } from '../redis/keys.js';
import type { Db } from '../platform/db/pool.js';
import { reconcile, type ReconcileDeps } from '../recovery/reconcile.js';
import type { SaleStock } from '../redis/sale-stock.js';
import {
  describeLayout,
  readReplicaLayout,
  type ReplicaLayout,
  type ReplicaLayoutDeps,
} from '../sale/replica-layout.js';
import { requireActivity, saleOf } from '../sale/sale-store.js';

/** What the check reads: MySQL, the sale's keys in Redis, the reconciliation and the replica layout. */
export type WarmupCheckDeps = ReconcileDeps &
  ReplicaLayoutDeps & {
    db: Db;
    sales: SaleStock;
  };

export interface WarmupCheck {
  name: string;
  expected: number | string | null;
  actual: number | string | null;
  ok: boolean;
}

export interface WarmupVerification {
  activityId: string;
  ok: boolean;
  at: string;
  /** Each Redis key warm-up writes and what it holds now (the Stream by its group and issued units). */
  keys: Record<string, unknown>;
  figures: Record<string, number | string | null>;
  checks: WarmupCheck[];
  /** The replica rule: each bucket's primary, its replicas in sync and units, and the verdict. */
  replicas: ReplicaLayout & { verdict: string };
}

const check = (name: string, expected: WarmupCheck['expected'], actual: WarmupCheck['actual']): WarmupCheck => ({
  name,
  expected,
  actual,
  ok: expected === actual,
});

export async function verifyWarmup(deps: WarmupCheckDeps, activityId: string): Promise<WarmupVerification> {
  const record = await requireActivity(deps.db, activityId);
  const sale = saleOf(record);
  const k = deps.sales.keys(sale);
  const [rec, warm, layout] = await Promise.all([
    reconcile(deps, activityId),
    deps.sales.warmState(sale),
    readReplicaLayout(deps, sale),
  ]);
  const f = rec.figures;
  const stock = f.redisStock ?? null;
  // Not released as Redis's stock stood when it was read (a release may be applied in between).
  const notReleased = f.notReleasedRedis ?? (f.heldBack ?? 0) + (f.pendingReleases ?? 0);
  const expectedStock =
    stock === null
      ? (f.available ?? 0)
      : (f.initial ?? 0) - notReleased - ((f.issued ?? 0) - (f.released ?? 0) - (f.refilledRedis ?? 0));
  const checks = [
    check('redis.warmed', 1, stock === null ? 0 : 1),
    check('redis.stock_matches_mysql', expectedStock, stock),
    check('redis.state_matches_mysql', record.state, warm.config.state ?? null),
    check('redis.max_per_user_matches_mysql', record.config.maxPerUser, Number(warm.config.maxPerUser ?? NaN) || null),
    // The rule every decision reads (access/sale-rules.ts): the one MySQL holds.
    check(
      'redis.eligibility_matches_mysql',
      eligibilityField(record.config.eligibility),
      warm.config.eligibility ?? null,
    ),
    check('redis.consumer_group_exists', 1, warm.group ? 1 : 0),
    check('redis.settlement_registry_lists_sale', 1, warm.registered ? 1 : 0),
    // Buckets one failover would stall; 0 expected, or an operator accepted them (who is shown).
    check(
      'redis.no_bucket_stalls_on_one_failover',
      layout.acceptedBy === null ? 0 : layout.stallsOnOneFailover.length,
      layout.stallsOnOneFailover.length,
    ),
  ];
  return {
    activityId,
    ok: checks.every((c) => c.ok),
    at: new Date().toISOString(),
    keys: {
      ...Object.fromEntries(warm.stocks.map((s) => [s.key, s.value])),
      [k.config]: warm.config,
      [k.events]: { group: warm.group ? CONSUMER_GROUP : null, issuedUnits: f.issued ?? 0, buckets: sale.buckets },
    },
    figures: { ...f, warmupStatus: record.warmupStatus, state: record.state },
    replicas: { ...layout, verdict: describeLayout(layout) },
    checks,
  };
}
