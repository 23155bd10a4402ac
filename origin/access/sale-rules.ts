/**
 * Who may decide a unit, at the origin: the deny list and each sale's eligibility rule,
 * applied where a unit is decided — inside the Lua scripts (lua/includes/access-rules.lua) of a
 * purchase and a waiting-room turn (reserve-6), a lottery entry (enter-6), a dead letter's retry
 * (requeue-5) and the draw's reservations (reserve-6). The edge's refusals stay as the early, cheap
 * answer; these are the ones that cannot be skipped.
 *
 * Where the rules are read, and why there. The reserve path is benchmarked against bare HTTP, so no
 * MySQL query per reserve. An in-process cache invalidated by pub/sub would be cheap but not
 * consistent: after `PUT /admin/deny/:userId` answers, another origin process may not have heard
 * yet. So each rule lives in Redis next to the units it guards — in every stock bucket, because a
 * script touches one slot (keys.ts): the deny list in the bucket's `denied` hash (userId → signed
 * revision), the rule in the bucket's config hash (`eligibility`). The script reads them in the same
 * atomic step that decides, so a rule written before an operator's call answers binds every decision
 * after it, by any process. The cost on the hot path is one HGET and one more HMGET field; the JSON
 * of rule and claims is decoded only on a members-only sale.
 *
 * Who writes them, in an order that leaves no gap:
 * - A deny-list change writes MySQL first, then every bucket of every sale that can still decide
 *   (MySQL's live activities and the warmed registry), then answers. Each write keeps the newer
 *   revision only (lua/deny-1.lua), so writes racing each other, or warm-up's bulk load, never undo
 *   a newer change.
 * - Warm-up and recover load the whole list (and seed the rule) BEFORE their script makes the sale
 *   warm. A deny committed after that load saw the activity in MySQL (it existed before warm-up
 *   began) and wrote it itself; one committed before is in the load.
 * - A PATCH of eligibility writes MySQL, then every bucket's config hash (warm or not), then
 *   answers; warm-up only seeds an absent field, so its older read never overwrites a PATCH.
 * A Redis that lost its data is not warm; recover reloads both before selling again.
 */
import type { Eligibility } from '../../contract/activity.js';
import { ContractError } from '../../contract/errors.js';
import type { OriginConfig } from '../platform/config.js';
import type { Db } from '../platform/db/pool.js';
import type { SaleAccess } from '../redis/sale-access.js';
import type { SaleRegistry } from '../redis/sale-registry.js';
import type { ActivityCatalog } from '../sale/catalog.js';
import { denyPage } from './deny-store.js';
import { knownActivityIds, liveActivityIds } from '../sale/sale-store.js';
import type { DenyRevision, Sale } from '../redis/redis-store.js';

/** Loading the rules into one sale: the deny list from MySQL, both into its buckets. */
export interface SaleRulesLoadDeps {
  db: Db;
  access: SaleAccess;
}

/** A deny-list change into every sale that can still decide: MySQL's live sales and Redis's warmed ones. */
export interface SaleRulesDeps extends SaleRulesLoadDeps {
  catalog: Pick<ActivityCatalog, 'resolve'>;
  registry: SaleRegistry;
  config: Pick<OriginConfig, 'EDGE_LIVE_AFTER_END_SECONDS'>;
}

/** The rule as the config hash holds it: JSON, or "" for everyone. */
export function eligibilityField(rule: Eligibility | null | undefined): string {
  return rule ? JSON.stringify(rule) : '';
}

/** Rows of the deny list read per query when loading it into a sale. */
const LOAD_PAGE = 10_000;

/**
 * Before a sale becomes warm (warm-up, recover): the whole deny list into its buckets, and its
 * eligibility rule where no PATCH wrote one yet.
 */
export async function loadSaleRules(deps: SaleRulesLoadDeps, sale: Sale, rule: Eligibility | null | undefined) {
  await deps.access.setEligibility(sale, eligibilityField(rule), true);
  let after = '0'; // user ids are positive BIGINTs
  for (;;) {
    const page = await denyPage(deps.db, after, LOAD_PAGE);
    if (page.length === 0) return;
    await deps.access.applyDeny(sale, page);
    if (page.length < LOAD_PAGE) return;
    after = page[page.length - 1]!.userId;
  }
}

/**
 * A deny-list change into every sale that can still decide a unit, before the admin call answers.
 * A Redis failure answers 503: MySQL holds the change, the edge is told anyway, and repeating the
 * call (a new revision) writes it again.
 */
export async function applyDenyToSales(deps: SaleRulesDeps, entry: DenyRevision): Promise<number> {
  const live = await liveActivityIds(deps.db, deps.config.EDGE_LIVE_AFTER_END_SECONDS);
  try {
    // Warmed sales (the registry) that MySQL no longer counts live still decide dead-letter retries.
    const warmed = await deps.registry.warmedSales();
    const ours = await knownActivities(
      deps.db,
      warmed.map((s) => s.activityId),
    );
    const sales = new Map<string, Sale>();
    for (const sale of warmed) if (ours.has(sale.activityId)) sales.set(sale.activityId, sale);
    for (const id of live) if (!sales.has(id)) sales.set(id, await deps.catalog.resolve(id));
    await Promise.all([...sales.values()].map((sale) => deps.access.applyDeny(sale, [entry])));
    return sales.size;
  } catch (err) {
    if (err instanceof ContractError) throw err;
    throw new ContractError(
      'unavailable',
      'the change is saved but could not be put in force at the origin (Redis); repeat the call',
      { retryAfter: 1, cause: err },
    );
  }
}

/**
 * Which of these ids are activities of this database: a registry entry of another deployment
 * sharing the Redis without a key prefix (tests do) is not ours to write into.
 */
async function knownActivities(db: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return knownActivityIds(db, ids);
}
