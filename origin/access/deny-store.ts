/**
 * Every statement on `seckill_deny_list` (schema/006): the deny list as MySQL keeps it, one row per
 * user with its state, its revision (bumped by each change) and the revision the edge confirmed.
 */
import type { Db } from '../platform/db/pool.js';
import { one, rows } from '../platform/db/rows.js';

/** One user's entry: the row's state and its revision. */
export interface DenyEntry {
  userId: string;
  denied: boolean;
  revision: number;
}

const toEntry = (r: { user_id: string; denied: number; revision: number }): DenyEntry => ({
  userId: String(r.user_id),
  denied: Number(r.denied) === 1,
  revision: Number(r.revision),
});

/** Denies or lifts (a change bumps the revision); returns the row as it stands after the write. */
export async function writeDenied(db: Db, userId: string, denied: boolean, actor: string): Promise<DenyEntry> {
  await db.query(
    `INSERT INTO seckill_deny_list (user_id, denied, actor) VALUES (?, ?, ?)
       ON DUPLICATE KEY UPDATE denied = ?, actor = ?, revision = revision + 1, updated_at = NOW(3)`,
    [userId, denied ? 1 : 0, actor, denied ? 1 : 0, actor],
  );
  // The row as it stands now, state and revision together: a concurrent change of the same user may
  // have landed in between, and then its state is the one that goes with the newest revision.
  const row = (await one<{ denied: number; revision: number }>(
    db.query('SELECT denied, revision FROM seckill_deny_list WHERE user_id = ?', [userId]),
  ))!;
  return { userId, denied: Number(row.denied) === 1, revision: Number(row.revision) };
}

/** The edge confirmed `revision` (a newer change in between stays unconfirmed). */
export async function markDenyPushed(db: Db, userId: string, revision: number): Promise<void> {
  await db.query('UPDATE seckill_deny_list SET pushed_revision = ? WHERE user_id = ? AND pushed_revision < ?', [
    revision,
    userId,
    revision,
  ]);
}

/** Changes the edge has not confirmed, by user, at most `limit`. */
export async function unpushedDenyChanges(db: Db, limit: number): Promise<DenyEntry[]> {
  const changed = await rows<{ user_id: string; denied: number; revision: number }>(
    db.query(
      `SELECT user_id, denied, revision FROM seckill_deny_list WHERE pushed_revision < revision ORDER BY user_id LIMIT ${Number(limit)}`,
    ),
  );
  return changed.map(toEntry);
}

/** One page of the list, by user id after `afterUserId`, at most `limit` rows. */
export async function denyPage(db: Db, afterUserId: string, limit: number): Promise<DenyEntry[]> {
  const page = await rows<{ user_id: string; denied: number; revision: number }>(
    db.query(
      `SELECT user_id, denied, revision FROM seckill_deny_list WHERE user_id > ? ORDER BY user_id LIMIT ${Number(limit)}`,
      [afterUserId],
    ),
  );
  return page.map(toEntry);
}

/** Every denied user, in one query: the lottery draw reads the list once, when it decides. */
export async function deniedUserIds(db: Db): Promise<Set<string>> {
  const denied = await rows<{ user_id: string }>(db.query('SELECT user_id FROM seckill_deny_list WHERE denied = 1'));
  return new Set(denied.map((r) => String(r.user_id)));
}
