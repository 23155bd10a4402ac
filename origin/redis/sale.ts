/**
 * A sale as Redis knows it: the activity, its SKU and how many stock buckets its stock is split
 * into (docs/design.md §10). Every job object of the Redis store takes one.
 */

/** One activity's SKU and how many stock buckets it has (1 = the single-key layout). */
export interface Sale {
  activityId: string;
  skuId: string;
  buckets: number;
  /** A shadow sale (a rehearsal on the production stack): its rows go to the shadow tables (origin/orders/ledger.ts). */
  shadow?: boolean;
}
