/**
 * The deny list (docs/design.md §10): `PUT` / `DELETE /admin/deny/:userId`. MySQL keeps the list; the edge
 * keeps its own copy in the UserGateDO shard of each user (the shard every ticket and purchase of
 * that user already calls), so a denied user costs no extra call and no origin call at the edge.
 * The origin's own copy, which every decision reads, is in Redis (access/sale-rules.ts): written
 * before the call answers, so every reservation decided after the answer obeys it.
 *
 * Each change bumps the row's `revision` and is pushed at once (`PUT /internal/deny`, signed) with
 * that revision: the edge keeps the revision of each entry and ignores a push older than what it
 * holds, so a replayed or late push never undoes a newer change (issue 24). A change the edge did
 * not confirm (`pushed_revision < revision`) is pushed again by DenyPushJob every
 * DENY_PUSH_RETRY_MS, so a lost push never leaves a user denied or allowed by mistake.
 */
import type { OriginContext } from '../context.js';
import { signedPut, type PushOptions } from '../platform/edge-push.js';
import { PeriodicJob } from '../platform/periodic.js';
import { deniedUserIds, markDenyPushed, unpushedDenyChanges, writeDenied, type DenyEntry } from './deny-store.js';
import { applyDenyToSales } from './sale-rules.js';

/** What this module uses of the origin's context. */
export type DenyListDeps = Pick<OriginContext, 'catalog' | 'config' | 'db' | 'log' | 'metrics' | 'stock'>;

/** One entry of a push: the row's state and its revision (the edge keeps the newest it was told). */
export type { DenyEntry };

type DenyRow = DenyEntry;

export type DenyPush = (entries: DenyEntry[]) => Promise<boolean>;

export function createDenyPush(opts: PushOptions): DenyPush {
  return (entries) =>
    signedPut(opts, '/internal/deny', JSON.stringify({ users: entries }), { denyEntries: entries.length });
}

function pushOf(ctx: DenyListDeps): DenyPush {
  return createDenyPush({
    edgeUrl: ctx.config.EDGE_URL,
    secret: ctx.config.EDGE_ORIGIN_SECRET,
    timeoutMs: ctx.config.EDGE_PUSH_TIMEOUT_MS,
    log: ctx.log,
  });
}

/** Denies or lifts; answers whether the edge confirmed it (else DenyPushJob keeps trying). */
export async function setDenied(ctx: DenyListDeps, userId: string, denied: boolean, actor: string) {
  const entry = await writeDenied(ctx.db, userId, denied, actor);
  // In force at the origin before the answer (every decision after it obeys), then at the edge.
  const sales = await applyDenyToSales(ctx, entry);
  ctx.log.info(
    { userId, actor, change: { denied }, revision: entry.revision, sales },
    denied ? 'user denied' : 'user allowed again',
  );
  ctx.metrics.adminChanges.inc({ setting: denied ? 'deny' : 'allow' });
  const atEdge = await confirmPushed(ctx, [entry]);
  return { userId, denied, atEdge };
}

async function confirmPushed(ctx: DenyListDeps, rows: DenyRow[]): Promise<boolean> {
  if (!ctx.config.EDGE_URL || rows.length === 0) return false;
  const ok = await pushOf(ctx)(rows);
  if (!ok) return false;
  // Only the revision that was pushed counts: a newer change in between is pushed again.
  for (const r of rows) await markDenyPushed(ctx.db, r.userId, r.revision);
  return true;
}

/** Pushes deny-list changes the edge has not confirmed. */
export class DenyPushJob extends PeriodicJob {
  constructor(private readonly ctx: DenyListDeps) {
    super('deny-push', ctx.config.DENY_PUSH_RETRY_MS, ctx.log);
  }

  async round(): Promise<boolean> {
    if (!this.ctx.config.EDGE_URL) return false;
    const batch = this.ctx.config.DENY_PUSH_BATCH;
    const entries: DenyRow[] = await unpushedDenyChanges(this.ctx.db, batch);
    const pushed = await confirmPushed(this.ctx, entries);
    return pushed && entries.length === batch;
  }
}

/** Every denied user (the deny store's query), for the lottery draw. */
export { deniedUserIds };
