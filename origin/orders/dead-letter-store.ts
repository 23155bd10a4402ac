/**
 * Every statement on `seckill_dead_letter` (schema/001): reservations settlement gave up on, their
 * row type and their status names. Functions take the pool or the caller's transaction first
 * (settlement reads the sale's dead letters inside its one transaction).
 */
import type { DbOrTx, Tx } from '../platform/db/pool.js';
import { one, rows } from '../platform/db/rows.js';
import type { SaleIds } from './order-store.js';

/** `seckill_dead_letter.status`: waiting for an operator, re-queued for settlement, or closed. */
export const DeadLetterStatus = { OPEN: 'open', RETRIED: 'retried', GIVEN_UP: 'given_up' } as const;
export type DeadLetterStatus = (typeof DeadLetterStatus)[keyof typeof DeadLetterStatus];

const { OPEN, RETRIED, GIVEN_UP } = DeadLetterStatus;

/** A `seckill_dead_letter` row (`SELECT *`). */
export interface DeadLetterRow {
  id: string;
  activity_id: string;
  reservation_id: string;
  user_id: string;
  quantity: number;
  stream_id: string;
  deliveries: number;
  reason: string;
  restocked: number;
  status: DeadLetterStatus;
  payload: string;
  created_at: Date;
  updated_at: Date;
}

/** What settlement records when it gives up on a reservation. */
export interface NewDeadLetter {
  activityId: string;
  skuId: string;
  reservationId: string;
  userId: string;
  quantity: number;
  streamId: string;
  deliveries: number;
  reason: string;
  /** The reservation event, as JSON. */
  payload: string;
}

/** Writes the dead letter, or updates it (a retried one is open again). */
export async function recordDeadLetterRow(tx: DbOrTx, d: NewDeadLetter): Promise<void> {
  await tx.execute(
    `INSERT INTO seckill_dead_letter (activity_id, sku_id, reservation_id, user_id, quantity, stream_id, deliveries, reason, payload)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE deliveries = GREATEST(deliveries, VALUES(deliveries)),
         stream_id = VALUES(stream_id), reason = VALUES(reason), status = IF(status = '${RETRIED}', '${OPEN}', status)`,
    [
      d.activityId,
      d.skuId,
      d.reservationId,
      d.userId,
      d.quantity,
      d.streamId,
      d.deliveries,
      d.reason.slice(0, 255),
      d.payload,
    ],
  );
}

/** Records how many units compensation gave back. */
export async function setRestocked(db: DbOrTx, reservationId: string, restocked: number): Promise<void> {
  await db.execute(
    'UPDATE seckill_dead_letter SET restocked = ?, updated_at = CURRENT_TIMESTAMP(3) WHERE reservation_id = ?',
    [restocked, reservationId],
  );
}

/**
 * The sale's dead letters that own their reservation (every status but `retried`), under a shared
 * lock on the sale's range: a dead letter written meanwhile waits for the caller's COMMIT.
 */
export async function deadLetteredInShareMode(tx: Tx, activityId: string): Promise<Set<string>> {
  const dead = await rows<{ reservation_id: string; status: DeadLetterStatus }>(
    tx.execute('SELECT reservation_id, status FROM seckill_dead_letter WHERE activity_id = ? LOCK IN SHARE MODE', [
      activityId,
    ]),
  );
  const owned = new Set<string>();
  for (const r of dead) if (r.status !== RETRIED) owned.add(r.reservation_id);
  return owned;
}

/** The user whose reservation was dead-lettered, if it was. */
export async function deadLetterOwner(db: DbOrTx, reservationId: string): Promise<string | undefined> {
  const dead = await one<{ user_id: string }>(
    db.execute('SELECT user_id FROM seckill_dead_letter WHERE reservation_id = ?', [reservationId]),
  );
  return dead ? String(dead.user_id) : undefined;
}

/** The sale's dead letters as recovery rebuilds Redis from them. */
export async function deadLettersForRecovery(
  db: DbOrTx,
  sale: SaleIds,
): Promise<
  {
    reservation_id: string;
    user_id: string;
    quantity: number;
    restocked: number;
    status: DeadLetterStatus;
    payload: string;
    ts: number;
  }[]
> {
  return rows(
    db.execute(
      `SELECT reservation_id, user_id, quantity, restocked, status, payload, UNIX_TIMESTAMP(created_at) * 1000 AS ts
           FROM seckill_dead_letter WHERE activity_id = ? AND sku_id = ?`,
      [sale.activityId, sale.skuId],
    ),
  );
}

/** The sale's dead units: every dead letter but a retried one (a live reservation again, back in the Stream). */
export async function deadUnitsOfSale(
  db: DbOrTx,
  sale: SaleIds,
): Promise<{ reservation_id: string; quantity: number }[]> {
  return rows(
    db.execute(
      `SELECT reservation_id, quantity FROM seckill_dead_letter WHERE activity_id = ? AND sku_id = ? AND status <> '${RETRIED}'`,
      [sale.activityId, sale.skuId],
    ),
  );
}

/** The sale's dead letters, by id, at most `limit`. */
export async function listDeadLetterRows(db: DbOrTx, activityId: string, limit: number): Promise<DeadLetterRow[]> {
  return rows<DeadLetterRow>(
    db.execute(`SELECT * FROM seckill_dead_letter WHERE activity_id = ? ORDER BY id LIMIT ${Number(limit)}`, [
      activityId,
    ]),
  );
}

/** The reservation's dead letter, if any. */
export async function deadLetterOf(db: DbOrTx, reservationId: string): Promise<DeadLetterRow | undefined> {
  return one<DeadLetterRow>(db.execute('SELECT * FROM seckill_dead_letter WHERE reservation_id = ?', [reservationId]));
}

/** open | given_up → given_up, with the units compensation gave back. */
export async function markGivenUp(db: DbOrTx, reservationId: string, restocked: number): Promise<void> {
  await db.execute(
    `UPDATE seckill_dead_letter SET status = '${GIVEN_UP}', restocked = ?, updated_at = CURRENT_TIMESTAMP(3)
      WHERE reservation_id = ? AND status IN ('${OPEN}', '${GIVEN_UP}')`,
    [restocked, reservationId],
  );
}

/** open | retried → retried (re-queued for settlement). */
export async function markRetried(db: DbOrTx, reservationId: string): Promise<void> {
  await db.execute(
    `UPDATE seckill_dead_letter SET status = '${RETRIED}', updated_at = CURRENT_TIMESTAMP(3)
      WHERE reservation_id = ? AND status IN ('${OPEN}', '${RETRIED}')`,
    [reservationId],
  );
}

/** retried → open (the re-queue was refused). */
export async function reopenRetried(db: DbOrTx, reservationId: string): Promise<void> {
  await db.execute(
    `UPDATE seckill_dead_letter SET status = '${OPEN}', updated_at = CURRENT_TIMESTAMP(3)
        WHERE reservation_id = ? AND status = '${RETRIED}'`,
    [reservationId],
  );
}

/** Open dead letters per activity. */
export async function openDeadLetterCounts(db: DbOrTx): Promise<Map<string, number>> {
  const counts = await rows<{ activityId: string; open: number }>(
    db.query(
      `SELECT activity_id AS activityId, COUNT(*) AS open FROM seckill_dead_letter WHERE status = '${OPEN}' GROUP BY activity_id`,
    ),
  );
  return new Map(counts.map((r) => [String(r.activityId), Number(r.open)]));
}

/** The sale's dead letters counted by status. */
export async function deadLetterCountsByStatus(db: DbOrTx, activityId: string): Promise<Record<string, number>> {
  const found = await rows<{ status: string; n: number }>(
    db.execute('SELECT status, COUNT(*) AS n FROM seckill_dead_letter WHERE activity_id = ? GROUP BY status', [
      activityId,
    ]),
  );
  return Object.fromEntries(found.map((r) => [r.status, Number(r.n)]));
}

/** Whether the sale has any dead letter. */
export async function hasDeadLetters(db: DbOrTx, activityId: string): Promise<boolean> {
  const row = await one<{ found: number }>(
    db.execute('SELECT EXISTS(SELECT 1 FROM seckill_dead_letter WHERE activity_id = ?) AS found', [activityId]),
  );
  return Number(row!.found) === 1;
}
