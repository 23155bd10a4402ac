/**
 * The draw record in MySQL (DESIGN §10): one row per lottery activity holding the secret seed from
 * creation on, the lease that lets one origin at a time run the draw, the state it has reached and
 * the published summary; and the published entrant list. Every step is a conditional update, so a
 * draw resumed after a crash, or raced by a second origin, changes each thing once.
 */
import { randomBytes } from 'node:crypto';
import type { DrawPublic } from '../../contract/activity.js';
import type { Db, Tx } from '../db/pool.js';
import { affected, one, rows } from '../db/rows.js';
import { commitmentOf } from './draw-rule.js';

export const DRAW_STATES = ['pending', 'drawing', 'drawn', 'published'] as const;
export type DrawState = (typeof DRAW_STATES)[number];

export interface DrawRecord {
  activityId: string;
  seed: string;
  commitment: string;
  state: DrawState;
  units: number | null;
  entrants: number | null;
  winners: number | null;
  unitsWon: number | null;
  drawMs: number | null;
  drawnAt: Date | null;
}

export interface DrawSummary {
  entrants: number;
  winners: number;
  unitsWon: number;
  drawMs: number;
  drawnAt: Date;
}

export interface EntrantRow {
  ticket: string;
  quantity: number;
  won: boolean;
}

/** A fresh secret seed (32 random bytes as 64 hex characters) and its public commitment. */
export async function insertDrawRecord(tx: Tx, activityId: string): Promise<void> {
  const seed = randomBytes(32).toString('hex');
  await tx.execute('INSERT INTO seckill_draw (activity_id, seed, commitment) VALUES (?, ?, ?)', [
    activityId,
    seed,
    commitmentOf(seed),
  ]);
}

/** A seckill_draw row as mysql2 returns it (the summary columns are null until drawn). */
interface DrawRow {
  activity_id: string;
  seed: string;
  commitment: string;
  state: DrawState;
  units: number | null;
  entrants: number | null;
  winners: number | null;
  units_won: number | null;
  draw_ms: number | null;
  drawn_at: Date | null;
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export async function findDraw(db: Db, activityId: string): Promise<DrawRecord | null> {
  const r = await one<DrawRow>(db.execute('SELECT * FROM seckill_draw WHERE activity_id = ?', [activityId]));
  if (!r) return null;
  return {
    activityId: String(r.activity_id),
    seed: r.seed,
    commitment: r.commitment,
    state: r.state,
    units: num(r.units),
    entrants: num(r.entrants),
    winners: num(r.winners),
    unitsWon: num(r.units_won),
    drawMs: num(r.draw_ms),
    drawnAt: r.drawn_at ? new Date(r.drawn_at) : null,
  };
}

/** What the public may see: the commitment always; the seed and summary only once the winners are final. */
export function publicDraw(d: DrawRecord): DrawPublic {
  if (d.state !== 'drawn' && d.state !== 'published') return { commitment: d.commitment };
  return {
    commitment: d.commitment,
    seed: d.seed,
    entrants: d.entrants ?? 0,
    winners: d.winners ?? 0,
    units: d.units ?? 0,
    unitsWon: d.unitsWon ?? 0,
    drawMs: d.drawMs ?? 0,
    drawnAt: d.drawnAt?.toISOString(),
    entrantsPublished: d.state === 'published',
  };
}

/** Lottery activities whose window has closed (by `now`) and whose draw is not yet published. */
export async function dueDraws(db: Db, now: Date): Promise<string[]> {
  const due = await rows<{ activity_id: string }>(
    db.execute(
      `SELECT d.activity_id FROM seckill_draw d JOIN seckill_activity a ON a.id = d.activity_id
        WHERE d.state <> 'published' AND TIMESTAMPADD(MICROSECOND, a.lottery_window_ms * 1000, a.starts_at) <= ?
        ORDER BY a.starts_at LIMIT 100`,
      [now],
    ),
  );
  return due.map((r) => String(r.activity_id));
}

/**
 * Takes or renews the draw's lease: true when `owner` holds it until now + leaseMs. A lease whose
 * holder died (SIGKILL) runs out, and the next origin takes over where the state says.
 */
export async function claimDraw(db: Db, activityId: string, owner: string, leaseMs: number): Promise<boolean> {
  const now = Date.now();
  const claimed = await affected(
    db.execute(
      `UPDATE seckill_draw SET owner = ?, lease_until = ?
        WHERE activity_id = ? AND state <> 'published' AND (owner IS NULL OR owner = ? OR lease_until < ?)`,
      [owner, new Date(now + leaseMs), activityId, owner, new Date(now)],
    ),
  );
  return claimed === 1;
}

/** pending → drawing, recording the units on sale at that moment (the figure the draw rule starts from). */
export async function beginDraw(db: Db, activityId: string, units: number): Promise<void> {
  await db.execute(
    `UPDATE seckill_draw SET state = 'drawing', units = ?, started_at = CURRENT_TIMESTAMP(3)
      WHERE activity_id = ? AND state = 'pending'`,
    [units, activityId],
  );
}

/**
 * drawing → drawn with the summary: the seed becomes public. The activity's version moves too, so
 * the edge takes the new snapshot. True for the one caller that made the change.
 */
export async function finishDraw(db: Db, activityId: string, s: DrawSummary): Promise<boolean> {
  const finished = await affected(
    db.execute(
      `UPDATE seckill_draw SET state = 'drawn', entrants = ?, winners = ?, units_won = ?, draw_ms = ?, drawn_at = ?
        WHERE activity_id = ? AND state = 'drawing'`,
      [s.entrants, s.winners, s.unitsWon, s.drawMs, s.drawnAt, activityId],
    ),
  );
  if (finished !== 1) return false;
  await bumpVersion(db, activityId);
  return true;
}

/** Writes a batch of the entrant list; a batch written before a crash is skipped (same keys). */
export async function insertEntrants(db: Db, activityId: string, entrants: EntrantRow[]): Promise<void> {
  if (entrants.length === 0) return;
  const values = entrants.map(() => '(?, ?, ?, ?)').join(', ');
  await db.query(
    `INSERT IGNORE INTO seckill_draw_entrant (activity_id, ticket, quantity, won) VALUES ${values}`,
    entrants.flatMap((r) => [activityId, r.ticket, r.quantity, r.won ? 1 : 0]),
  );
}

/** drawn → published: the entrant list is complete. */
export async function markPublished(db: Db, activityId: string): Promise<boolean> {
  const published = await affected(
    db.execute(
      `UPDATE seckill_draw SET state = 'published', owner = NULL, lease_until = NULL
        WHERE activity_id = ? AND state = 'drawn'`,
      [activityId],
    ),
  );
  if (published !== 1) return false;
  await bumpVersion(db, activityId);
  return true;
}

/** One page of the published list, in draw order (ascending ticket), after `after`. */
export async function entrantsPage(db: Db, activityId: string, after: string, limit: number): Promise<EntrantRow[]> {
  const page = await rows<{ ticket: string; quantity: number; won: number }>(
    db.query(
      `SELECT ticket, quantity, won FROM seckill_draw_entrant
        WHERE activity_id = ? AND ticket > ? ORDER BY ticket LIMIT ?`,
      [activityId, after, limit],
    ),
  );
  return page.map((r) => ({ ticket: r.ticket, quantity: Number(r.quantity), won: Number(r.won) === 1 }));
}

async function bumpVersion(db: Db, activityId: string): Promise<void> {
  await db.execute(
    'UPDATE seckill_activity SET version = version + 1, updated_at = CURRENT_TIMESTAMP(3) WHERE id = ?',
    [activityId],
  );
}
