/** Activities and their stock rows in MySQL: the source of truth for config and switches. */
import {
  eligibilitySchema,
  type ActivityConfig,
  type ActivitySwitch,
  type Eligibility,
} from '../../contract/activity.js';
import { ContractError } from '../../contract/errors.js';
import type { ProductFields } from '../../contract/product.js';
import { inTransaction, isDuplicateKey, type Db, type Tx } from '../platform/db/pool.js';
import type { Sale } from '../redis/redis-store.js';
import { affected, one, rows } from '../platform/db/rows.js';
import type { CreateActivity } from './sale-schemas.js';
import type { WarmupStatus } from './sale-status.js';

export interface ActivityRecord {
  config: ActivityConfig;
  state: ActivitySwitch;
  initialStock: number;
  available: number;
  stockBuckets: number;
  /** Units not yet put on sale (seckill_stock.held_back). */
  heldBack: number;
  warmupStatus: WarmupStatus;
  /** A shadow sale (created with `shadow: true`, never changed): its rows are in the shadow tables. */
  shadow: boolean;
}

/** A seckill_activity row joined with its seckill_stock figures, as mysql2 returns it. */
interface ActivityRow {
  id: string;
  sku_id: string;
  title: string;
  starts_at: Date;
  ends_at: Date;
  state: ActivitySwitch;
  max_per_user: number;
  payment_timeout_seconds: number;
  user_rate_per_sec: number;
  admission_rate_per_sec: number;
  admission_shards: number;
  version: number;
  stock_buckets: number | null;
  description: string | null;
  price_cents: number | null;
  currency: string | null;
  image_url: string | null;
  admission: string;
  lottery_window_ms: number;
  sold_out_threshold: number;
  eligibility: string | null;
  overflow: string;
  warmup_status: WarmupStatus;
  shadow: number;
  initial_stock: number;
  available: number;
  held_back: number;
}

/** The sale's stock as the RedisStore names it (and whether it is a shadow sale: its ledger). */
export function saleOf(record: ActivityRecord): Sale {
  return {
    activityId: record.config.activityId,
    skuId: record.config.skuId,
    buckets: record.stockBuckets,
    shadow: record.shadow,
  };
}

function parseEligibility(text: unknown): Eligibility | null {
  if (typeof text !== 'string' || text === '') return null;
  const parsed = eligibilitySchema.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : null;
}

/**
 * Creates the sale, its stock row and its first release in one transaction. `alsoWrite` writes what
 * else must exist from creation on in the same transaction: a lottery's draw record (its commitment;
 * the seed stays out of MySQL until the reveal), written by the lottery's store, which sits above this one.
 */
export async function insertActivity(db: Db, a: CreateActivity, alsoWrite?: (tx: Tx) => Promise<void>): Promise<void> {
  try {
    await inTransaction(db, async (tx) => {
      await tx.execute(
        `INSERT INTO seckill_activity (id, sku_id, title, starts_at, ends_at, state, max_per_user, payment_timeout_seconds,
           user_rate_per_sec, admission_rate_per_sec, admission_shards, stock_buckets,
           description, price_cents, currency, image_url, admission, lottery_window_ms, sold_out_threshold,
           eligibility, overflow, shadow)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          a.activityId,
          a.skuId,
          a.title,
          new Date(a.startsAt),
          new Date(a.endsAt),
          a.state,
          a.maxPerUser,
          a.paymentTimeoutSeconds,
          a.userRatePerSec,
          a.admissionRatePerSec,
          a.admissionShards,
          a.stockBuckets,
          a.description ?? null,
          a.priceCents ?? null,
          a.currency ?? null,
          a.imageUrl ?? null,
          a.admission,
          a.lotteryWindowMs,
          a.soldOutThreshold,
          a.eligibility ? JSON.stringify(a.eligibility) : null,
          a.overflow,
          a.shadow ? 1 : 0,
        ],
      );
      if (a.admission === 'lottery' && !alsoWrite)
        throw new Error(`lottery ${a.activityId} created without its draw record`);
      await alsoWrite?.(tx);
      const onSale = a.initialRelease ?? a.stock;
      await tx.execute(
        'INSERT INTO seckill_stock (activity_id, sku_id, initial_stock, available, held_back) VALUES (?, ?, ?, ?, ?)',
        [a.activityId, a.skuId, a.stock, onSale, a.stock - onSale],
      );
    });
  } catch (err) {
    if (isDuplicateKey(err))
      throw new ContractError(
        'conflict',
        a.shadow
          ? `activity ${a.activityId} already exists: a shadow sale needs an id of its own (a sale is real or shadow from its creation on)`
          : `activity ${a.activityId} already exists`,
      );
    throw err;
  }
}

export async function findActivity(db: Db, activityId: string): Promise<ActivityRecord | null> {
  const r = await one<ActivityRow>(
    db.execute(
      `SELECT a.*, s.initial_stock, s.available, s.held_back FROM seckill_activity a
         JOIN seckill_stock s ON s.activity_id = a.id AND s.sku_id = a.sku_id WHERE a.id = ?`,
      [activityId],
    ),
  );
  if (!r) return null;
  return {
    config: {
      activityId: String(r.id),
      skuId: String(r.sku_id),
      title: r.title,
      startsAt: new Date(r.starts_at).toISOString(),
      endsAt: new Date(r.ends_at).toISOString(),
      maxPerUser: Number(r.max_per_user),
      paymentTimeoutSeconds: Number(r.payment_timeout_seconds),
      userRatePerSec: Number(r.user_rate_per_sec),
      admissionRatePerSec: Number(r.admission_rate_per_sec),
      admissionShards: Number(r.admission_shards),
      version: Number(r.version),
      ...productFields(r),
      admission: r.admission === 'lottery' ? 'lottery' : 'fcfs',
      lotteryWindowMs: Number(r.lottery_window_ms),
      soldOutThreshold: Number(r.sold_out_threshold),
      eligibility: parseEligibility(r.eligibility),
      overflow: r.overflow === 'queue' ? 'queue' : 'reject',
      // Only on a shadow sale, so a real sale's snapshot keeps its body.
      ...(Number(r.shadow) === 1 ? { shadow: true } : {}),
    },
    state: r.state,
    initialStock: Number(r.initial_stock),
    available: Number(r.available),
    stockBuckets: Number(r.stock_buckets ?? 1),
    heldBack: Number(r.held_back),
    warmupStatus: r.warmup_status,
    shadow: Number(r.shadow) === 1,
  };
}

/** NULL columns stay out of the config (and so out of the snapshot and the public activity). */
function productFields(r: ActivityRow): ProductFields {
  const p: ProductFields = {};
  if (r.description != null) p.description = r.description;
  if (r.price_cents != null) p.priceCents = Number(r.price_cents);
  if (r.currency != null) p.currency = r.currency;
  if (r.image_url != null) p.imageUrl = r.image_url;
  return p;
}

export async function requireActivity(db: Db, activityId: string): Promise<ActivityRecord> {
  const found = await findActivity(db, activityId);
  if (!found) throw new ContractError('not_found', `activity ${activityId} does not exist`);
  return found;
}

/** Switch change; `stopped` is final. Bumps the version the edge uses to order updates. */
export async function updateState(db: Db, activityId: string, state: ActivitySwitch): Promise<void> {
  const changed = await affected(
    db.execute(
      `UPDATE seckill_activity SET state = ?, version = version + 1, updated_at = CURRENT_TIMESTAMP(3)
        WHERE id = ? AND state <> 'stopped'`,
      [state, activityId],
    ),
  );
  if (changed === 0) {
    await requireActivity(db, activityId);
    throw new ContractError('conflict', `activity ${activityId} is stopped; a stopped sale cannot change state`);
  }
}

/** Column of each live setting other than `state` (docs/design.md §10 live switches). */
const SETTING_COLUMNS = {
  userRatePerSec: 'user_rate_per_sec',
  admissionRatePerSec: 'admission_rate_per_sec',
  soldOutThreshold: 'sold_out_threshold',
  eligibility: 'eligibility',
  maxPerUser: 'max_per_user',
} as const;
export type LiveSetting = keyof typeof SETTING_COLUMNS;

/** Writes live settings (not `state`) in one UPDATE that bumps the version; a stopped sale refuses. */
export async function updateSettings(db: Db, activityId: string, patch: Partial<Pick<ActivityConfig, LiveSetting>>) {
  const names = (Object.keys(SETTING_COLUMNS) as LiveSetting[]).filter((k) => patch[k] !== undefined);
  if (names.length === 0) return;
  const values = names.map((k) =>
    k === 'eligibility' ? (patch.eligibility ? JSON.stringify(patch.eligibility) : null) : patch[k],
  );
  const changed = await affected(
    db.query(
      `UPDATE seckill_activity SET ${names.map((k) => `${SETTING_COLUMNS[k]} = ?`).join(', ')},
              version = version + 1, updated_at = CURRENT_TIMESTAMP(3)
        WHERE id = ? AND state <> 'stopped'`,
      [...values, activityId],
    ),
  );
  if (changed === 0) {
    await requireActivity(db, activityId);
    throw new ContractError('conflict', `activity ${activityId} is stopped; its settings cannot change`);
  }
}

/** The sale's SKU and Redis bucket count (the catalog's entry). */
export async function saleLayoutOf(
  db: Db,
  activityId: string,
): Promise<{ sku_id: string; stock_buckets: number | null; shadow: number } | undefined> {
  return one<{ sku_id: string; stock_buckets: number | null; shadow: number }>(
    db.execute('SELECT sku_id, stock_buckets, shadow FROM seckill_activity WHERE id = ?', [activityId]),
  );
}

/**
 * Activities the edge should answer for: every one not ended more than `keepAfterEndSeconds` ago
 * (an ended sale still answers `ended`, and its holders still poll and pay), at most 10,000.
 */
export async function liveActivityIds(db: Db, keepAfterEndSeconds: number): Promise<string[]> {
  const live = await rows<{ id: string }>(
    db.query('SELECT id FROM seckill_activity WHERE ends_at > NOW(3) - INTERVAL ? SECOND ORDER BY id LIMIT 10000', [
      keepAfterEndSeconds,
    ]),
  );
  return live.map((r) => String(r.id));
}

/** The sale's admission mode, start and lottery window (lottery admission). */
export async function admissionOf(
  db: Db,
  activityId: string,
): Promise<{ admission: string; starts_at: Date; lottery_window_ms: number | null } | undefined> {
  return one(
    db.execute('SELECT admission, starts_at, lottery_window_ms FROM seckill_activity WHERE id = ?', [activityId]),
  );
}

/** A sale as the console's list shows it: its row and its stock figures. */
export interface SaleListRow {
  id: string;
  title: string;
  starts_at: Date;
  ends_at: Date;
  state: string;
  initial_stock: number;
  available: number;
  held_back: number;
  warmup_status: string;
  shadow: number;
}

/** The most recently created sales, newest first, at most `limit`. */
export async function latestSales(db: Db, limit: number): Promise<SaleListRow[]> {
  return rows<SaleListRow>(
    db.query(
      `SELECT a.id, a.title, a.starts_at, a.ends_at, a.state, a.warmup_status, a.shadow, s.initial_stock, s.available, s.held_back
         FROM seckill_activity a JOIN seckill_stock s ON s.activity_id = a.id AND s.sku_id = a.sku_id
        ORDER BY a.created_at DESC, a.id DESC LIMIT ${Number(limit)}`,
    ),
  );
}

/** Which of these ids are activities of this database. */
export async function knownActivityIds(db: Db, ids: string[]): Promise<Set<string>> {
  const found = await rows<{ id: string }>(
    db.query(`SELECT id FROM seckill_activity WHERE id IN (${ids.map(() => '?').join(', ')})`, ids),
  );
  return new Set(found.map((r) => String(r.id)));
}
