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
import { one, rows } from '../platform/db/rows.js';
import { applyDenyToSales } from './sale-rules.js';

/** What this module uses of the origin's context. */
export type DenyListDeps = Pick<OriginContext, 'catalog' | 'config' | 'db' | 'log' | 'metrics' | 'stock'>;

/** One entry of a push: the row's state and its revision (the edge keeps the newest it was told). */
export interface DenyEntry {
  userId: string;
  denied: boolean;
  revision: number;
}

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
  await ctx.db.query(
    `INSERT INTO seckill_deny_list (user_id, denied, actor) VALUES (?, ?, ?)
       ON DUPLICATE KEY UPDATE denied = ?, actor = ?, revision = revision + 1, updated_at = NOW(3)`,
    [userId, denied ? 1 : 0, actor, denied ? 1 : 0, actor],
  );
  // The row as it stands now, state and revision together: a concurrent change of the same user may
  // have landed in between, and then its state is the one that goes with the newest revision.
  const row = (await one<{ denied: number; revision: number }>(
    ctx.db.query('SELECT denied, revision FROM seckill_deny_list WHERE user_id = ?', [userId]),
  ))!;
  const entry = { userId, denied: Number(row.denied) === 1, revision: Number(row.revision) };
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
  for (const r of rows)
    await ctx.db.query('UPDATE seckill_deny_list SET pushed_revision = ? WHERE user_id = ? AND pushed_revision < ?', [
      r.revision,
      r.userId,
      r.revision,
    ]);
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
    const changed = await rows<{ user_id: string; denied: number; revision: number }>(
      this.ctx.db.query(
        `SELECT user_id, denied, revision FROM seckill_deny_list WHERE pushed_revision < revision ORDER BY user_id LIMIT ${batch}`,
      ),
    );
    const entries: DenyRow[] = changed.map((r) => ({
      userId: String(r.user_id),
      denied: Number(r.denied) === 1,
      revision: Number(r.revision),
    }));
    const pushed = await confirmPushed(this.ctx, entries);
    return pushed && entries.length === batch;
  }
}

/** Every denied user, in one query: the lottery draw reads the list once, when it decides. */
export async function deniedUserIds(db: OriginContext['db']): Promise<Set<string>> {
  const denied = await rows<{ user_id: string }>(db.query('SELECT user_id FROM seckill_deny_list WHERE denied = 1'));
  return new Set(denied.map((r) => String(r.user_id)));
}
