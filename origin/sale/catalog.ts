/**
 * activityId → skuId for the request path. An activity sells one SKU and never changes it, so a
 * found mapping is cached for the life of the process; an unknown id is remembered briefly.
 */
import { ContractError } from '../../contract/errors.js';
import type { Db } from '../platform/db/pool.js';
import type { Sale } from '../redis/redis-store.js';
import { saleLayoutOf } from './sale-store.js';

/** How long "no such activity" is remembered before MySQL is asked again. */
const UNKNOWN_TTL_MS = 1_000;

export class ActivityCatalog {
  private readonly known = new Map<string, Sale>();
  private readonly unknown = new Map<string, number>();

  constructor(private readonly db: Db) {}

  async resolve(activityId: string): Promise<Sale> {
    const hit = this.known.get(activityId);
    if (hit) return hit;
    const missUntil = this.unknown.get(activityId);
    if (missUntil && missUntil > Date.now()) throw notFound(activityId);
    const row = await saleLayoutOf(this.db, activityId);
    if (!row) {
      if (this.unknown.size > 10_000) this.unknown.clear();
      this.unknown.set(activityId, Date.now() + UNKNOWN_TTL_MS);
      throw notFound(activityId);
    }
    const skuId = String(row.sku_id);
    const entry = { activityId, skuId, buckets: Number(row.stock_buckets ?? 1), shadow: Number(row.shadow) === 1 };
    this.known.set(activityId, entry);
    return entry;
  }

  remember(sale: Sale): void {
    this.unknown.delete(sale.activityId);
    this.known.set(sale.activityId, sale);
  }
}

function notFound(activityId: string) {
  return new ContractError('not_found', `activity ${activityId} does not exist`);
}
