/**
 * The deny list (docs/design.md §10): `PUT` / `DELETE /admin/deny/:userId`. MySQL keeps the list; the edge
 * keeps its own copy in the UserGateDO shard of each user (the shard every ticket and purchase of
 * that user already calls), so a denied user costs no extra call and no origin call at the edge.
 * The origin's own copy, which every decision reads, is in Redis (access/sale-rules.ts): written
 * before the call answers, so every reservation decided after the answer obeys it.
 *
 * Each change bumps the row's `revision` and is pushed at once (`PUT /internal/deny`, signed) with
 * that revision: the edge keeps the revision of each entry and ignores a push older than what it
 * holds, so a replayed or late push never undoes a newer change. A change the edge did
 * not confirm (`pushed_revision < revision`) is pushed again by DenyPushJob every
 * DENY_PUSH_RETRY_MS, so a lost push never leaves a user denied or allowed by mistake.
 */
import type { OriginConfig } from '../platform/config.js';
import type { Db } from '../platform/db/pool.js';
import { signedPut, type PushOptions } from '../platform/edge-push.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import { PeriodicJob } from '../platform/periodic.js';
import { deniedUserIds, markDenyPushed, unpushedDenyChanges, writeDenied, type DenyEntry } from './deny-store.js';
import { applyDenyToSales, type SaleRulesDeps } from './sale-rules.js';

/** Pushing changes to the edge and recording what it confirmed. */
export interface DenyPushDeps {
  db: Db;
  log: Logger;
  config: Pick<OriginConfig, 'EDGE_URL' | 'EDGE_ORIGIN_SECRET' | 'EDGE_PUSH_TIMEOUT_MS'>;
}

/** An operator's change: MySQL, every sale's buckets in Redis (sale-rules.ts), then the edge. */
export type DenyListDeps = SaleRulesDeps &
  DenyPushDeps & {
    metrics: Pick<Metrics, 'adminChanges'>;
  };

/** The retry job: DenyPushDeps, how often, and how many changes per push. */
export interface DenyPushJobDeps extends DenyPushDeps {
  config: DenyPushDeps['config'] & Pick<OriginConfig, 'DENY_PUSH_RETRY_MS' | 'DENY_PUSH_BATCH'>;
}

/** One entry of a push: the row's state and its revision (the edge keeps the newest it was told). */
export type { DenyEntry };

type DenyRow = DenyEntry;

export type DenyPush = (entries: DenyEntry[]) => Promise<boolean>;

export function createDenyPush(opts: PushOptions): DenyPush {
  return (entries) =>
    signedPut(opts, '/internal/deny', JSON.stringify({ users: entries }), { denyEntries: entries.length });
}

function pushOf(deps: DenyPushDeps): DenyPush {
  return createDenyPush({
    edgeUrl: deps.config.EDGE_URL,
    secret: deps.config.EDGE_ORIGIN_SECRET,
    timeoutMs: deps.config.EDGE_PUSH_TIMEOUT_MS,
    log: deps.log,
  });
}

/** Denies or lifts; answers whether the edge confirmed it (else DenyPushJob keeps trying). */
export async function setDenied(deps: DenyListDeps, userId: string, denied: boolean, actor: string) {
  const entry = await writeDenied(deps.db, userId, denied, actor);
  // In force at the origin before the answer (every decision after it obeys), then at the edge.
  const sales = await applyDenyToSales(deps, entry);
  deps.log.info(
    { userId, actor, change: { denied }, revision: entry.revision, sales },
    denied ? 'user denied' : 'user allowed again',
  );
  deps.metrics.adminChanges.inc({ setting: denied ? 'deny' : 'allow' });
  const atEdge = await confirmPushed(deps, [entry]);
  return { userId, denied, atEdge };
}

async function confirmPushed(deps: DenyPushDeps, rows: DenyRow[]): Promise<boolean> {
  if (!deps.config.EDGE_URL || rows.length === 0) return false;
  const ok = await pushOf(deps)(rows);
  if (!ok) return false;
  // Only the revision that was pushed counts: a newer change in between is pushed again.
  for (const r of rows) await markDenyPushed(deps.db, r.userId, r.revision);
  return true;
}

/** Pushes deny-list changes the edge has not confirmed. */
export class DenyPushJob extends PeriodicJob {
  constructor(private readonly deps: DenyPushJobDeps) {
    super('deny-push', deps.config.DENY_PUSH_RETRY_MS, deps.log);
  }

  async round(): Promise<boolean> {
    if (!this.deps.config.EDGE_URL) return false;
    const batch = this.deps.config.DENY_PUSH_BATCH;
    const entries: DenyRow[] = await unpushedDenyChanges(this.deps.db, batch);
    const pushed = await confirmPushed(this.deps, entries);
    return pushed && entries.length === batch;
  }
}

/** Every denied user (the deny store's query), for the lottery draw. */
export { deniedUserIds };
