/**
 * The draw record in MySQL (docs/design.md §10): one row per lottery activity holding the seed's commitment
 * and nonce from creation on (scheme 2: the seed itself only from the reveal), the
 * closed list's digest from the close on, the lease that lets one origin at a time run the draw, the state it has reached and
 * the published summary; and the published entrant list. Every step is a conditional update, so a
 * draw resumed after a crash, or raced by a second origin, changes each thing once.
 */
import { randomBytes } from 'node:crypto';
import type { DrawPublic } from '../../contract/activity.js';
import type { Db, Tx } from '../platform/db/pool.js';
import { affected, one, rows } from '../platform/db/rows.js';
import { commitmentOf, DRAW_SCHEME, seedOf, type DrawParameters } from './draw-rule.js';

export const DRAW_STATES = ['pending', 'drawing', 'drawn', 'published'] as const;
export type DrawState = (typeof DRAW_STATES)[number];

export interface DrawRecord {
  activityId: string;
  /**
   * 1: seed stored from creation, ticket = entrant id; 2: seed from DRAW_SECRET, tickets over the
   * digest; 3: as 2, the commitment binds the scheme and the close record is kept.
   */
  scheme: number;
  /** Scheme 2: null until the reveal (state drawn). */
  seed: string | null;
  seedNonce: string | null;
  commitment: string;
  /** SHA-256 of the closed list (scheme 2), recorded when the draw begins. */
  entrantsDigest: string | null;
  /** Scheme 3: the parameters fixed at the close and the close record's digest (draw-rule.ts closeText). */
  closeParameters: DrawParameters | null;
  closeDigest: string | null;
  excluded: number | null;
  state: DrawState;
  units: number | null;
  entrants: number | null;
  winners: number | null;
  unitsWon: number | null;
  drawMs: number | null;
  drawnAt: Date | null;
}

export interface DrawSummary {
  seed: string;
  entrants: number;
  excluded: number;
  winners: number;
  unitsWon: number;
  drawMs: number;
  drawnAt: Date;
}

/** One line of the published list. `entrant`/`entry`/`excluded`: scheme 2 only. */
export interface EntrantRow {
  ticket: string;
  quantity: number;
  won: boolean;
  entrant?: string;
  entry?: number;
  excluded?: boolean;
}

/** What creation stores: a random nonce and the commitment to the seed it gives with DRAW_SECRET. */
export interface NewDraw {
  nonce: string;
  commitment: string;
}

export function newDraw(drawSecret: string, activityId: string): NewDraw {
  const nonce = randomBytes(32).toString('hex');
  return { nonce, commitment: commitmentOf(seedOf(drawSecret, activityId, nonce), DRAW_SCHEME) };
}

/** The draw record at creation: no seed in MySQL (it is derived from DRAW_SECRET at the draw). */
export async function insertDrawRecord(tx: Tx, activityId: string, draw: NewDraw): Promise<void> {
  await tx.execute(
    'INSERT INTO seckill_draw (activity_id, scheme, seed, seed_nonce, commitment) VALUES (?, ?, NULL, ?, ?)',
    [activityId, DRAW_SCHEME, draw.nonce, draw.commitment],
  );
}

/** A seckill_draw row as mysql2 returns it (the summary columns are null until drawn). */
interface DrawRow {
  activity_id: string;
  scheme: number;
  seed: string | null;
  seed_nonce: string | null;
  commitment: string;
  entrants_digest: string | null;
  close_parameters: string | null;
  close_digest: string | null;
  excluded: number | null;
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
    scheme: Number(r.scheme),
    seed: r.seed,
    seedNonce: r.seed_nonce,
    commitment: r.commitment,
    entrantsDigest: r.entrants_digest,
    closeParameters: r.close_parameters ? (JSON.parse(r.close_parameters) as DrawParameters) : null,
    closeDigest: r.close_digest,
    excluded: num(r.excluded),
    state: r.state,
    units: num(r.units),
    entrants: num(r.entrants),
    winners: num(r.winners),
    unitsWon: num(r.units_won),
    drawMs: num(r.draw_ms),
    drawnAt: r.drawn_at ? new Date(r.drawn_at) : null,
  };
}

/**
 * What the public may see: the commitment always; the closed list's digest and the close
 * record from the close on (before the reveal); the seed and summary only once the winners are final.
 */
export function publicDraw(d: DrawRecord): DrawPublic {
  const closed = {
    ...(d.entrantsDigest ? { entrantsDigest: d.entrantsDigest } : {}),
    ...(d.closeParameters && d.closeDigest ? { parameters: d.closeParameters, closeDigest: d.closeDigest } : {}),
  };
  if ((d.state !== 'drawn' && d.state !== 'published') || !d.seed) return { commitment: d.commitment, ...closed };
  return {
    commitment: d.commitment,
    seed: d.seed,
    ...closed,
    scheme: d.scheme,
    entrants: d.entrants ?? 0,
    excluded: d.excluded ?? 0,
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

/**
 * pending → drawing, recording the units on sale at that moment (the figure the draw rule starts
 * from), the closed list's digest and, scheme 3, the close record (parameters and their digest), all
 * published with the activity from now on, before the reveal. True for the one caller that made the change.
 */
export async function beginDraw(
  db: Db,
  activityId: string,
  units: number,
  digest: string,
  close: { parameters: DrawParameters; digest: string } | null,
): Promise<boolean> {
  const begun = await affected(
    db.execute(
      `UPDATE seckill_draw SET state = 'drawing', units = ?, entrants_digest = ?, close_parameters = ?, close_digest = ?,
          started_at = CURRENT_TIMESTAMP(3)
        WHERE activity_id = ? AND state = 'pending'`,
      [units, digest, close ? JSON.stringify(close.parameters) : null, close?.digest ?? null, activityId],
    ),
  );
  if (begun !== 1) return false;
  await bumpVersion(db, activityId);
  return true;
}

/**
 * drawing → drawn with the summary: the seed is stored and becomes public. The activity's version moves too, so
 * the edge takes the new snapshot. True for the one caller that made the change.
 */
export async function finishDraw(db: Db, activityId: string, s: DrawSummary): Promise<boolean> {
  const finished = await affected(
    db.execute(
      `UPDATE seckill_draw SET state = 'drawn', seed = ?, entrants = ?, excluded = ?, winners = ?, units_won = ?,
          draw_ms = ?, drawn_at = ?
        WHERE activity_id = ? AND state = 'drawing'`,
      [s.seed, s.entrants, s.excluded, s.winners, s.unitsWon, s.drawMs, s.drawnAt, activityId],
    ),
  );
  if (finished !== 1) return false;
  await bumpVersion(db, activityId);
  return true;
}

/** Writes a batch of the entrant list; a batch written before a crash is skipped (same keys). */
export async function insertEntrants(db: Db, activityId: string, entrants: EntrantRow[]): Promise<void> {
  if (entrants.length === 0) return;
  const values = entrants.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ');
  await db.query(
    `INSERT IGNORE INTO seckill_draw_entrant (activity_id, ticket, quantity, won, entrant, entry, excluded)
      VALUES ${values}`,
    entrants.flatMap((r) => [
      activityId,
      r.ticket,
      r.quantity,
      r.won ? 1 : 0,
      r.entrant ?? null,
      r.entry ?? null,
      r.excluded ? 1 : 0,
    ]),
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
  const page = await rows<{
    ticket: string;
    quantity: number;
    won: number;
    entrant: string | null;
    entry: number | null;
    excluded: number;
  }>(
    db.query(
      `SELECT ticket, quantity, won, entrant, entry, excluded FROM seckill_draw_entrant
        WHERE activity_id = ? AND ticket > ? ORDER BY ticket LIMIT ?`,
      [activityId, after, limit],
    ),
  );
  // Scheme 1 rows have no entrant / entry: their lines keep the old shape.
  return page.map((r) => ({
    ticket: r.ticket,
    quantity: Number(r.quantity),
    won: Number(r.won) === 1,
    ...(r.entrant ? { entrant: r.entrant, entry: Number(r.entry), excluded: Number(r.excluded) === 1 } : {}),
  }));
}

async function bumpVersion(db: Db, activityId: string): Promise<void> {
  await db.execute(
    'UPDATE seckill_activity SET version = version + 1, updated_at = CURRENT_TIMESTAMP(3) WHERE id = ?',
    [activityId],
  );
}

/** A draw begun before the digest existed (an older version) gets its closed list's digest. */
export async function recordDigest(db: Db, activityId: string, digest: string): Promise<void> {
  await db.execute(`UPDATE seckill_draw SET entrants_digest = ? WHERE activity_id = ? AND entrants_digest IS NULL`, [
    digest,
    activityId,
  ]);
  await bumpVersion(db, activityId);
}
