/**
 * Admin handling of dead letters (reservations settlement gave up on, origin/settlement/dead-lettering.ts).
 *
 * give up = compensate and close: runs the idempotent release again (it already ran when the dead
 * letter was written, unless Redis was not warm then) and marks the row `given_up`. Idempotent.
 *
 * retry = re-queue for settlement. Rule: allowed only while no order exists, the dead letter is not
 * given up, compensation has released the reservation (so its units are accounted for), the user
 * holds no other reservation now, and Redis still has the units compensation gave back. Then, in
 * one script (lua/requeue-5.lua), those units are taken out of stock again, the user's holder is
 * set back and the reservation is appended to the Stream; the row becomes `retried`, which
 * settle.ts does not treat as owning the reservation. If settlement fails again, the row is
 * dead-lettered again (status back to `open`). MySQL's conditional stock update stays the last
 * guard, so a retry can never sell a unit MySQL does not have. A user denied since is refused in
 * the same script (the deny list in the bucket, origin/access/sale-rules.ts): 409, nothing requeued.
 * Eligibility is not checked again here: the claims were seen only when the reservation was made.
 */
import { ContractError } from '../../contract/errors.js';
import type { Db } from '../platform/db/pool.js';
import type { Logger } from '../platform/logger.js';
import { notReadyError } from '../redis/script-refusals.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { SaleStreams } from '../redis/sale-streams.js';
import type { ActivityCatalog } from '../sale/catalog.js';
import { compensate } from '../settlement/dead-lettering.js';
import type { ReservationEvent } from '../settlement/event.js';
import { ledgerOf } from '../orders/ledger.js';
import { hasOrderOfReservation } from '../orders/order-store.js';
import {
  DeadLetterStatus,
  deadLetterOf,
  listDeadLetterRows,
  markGivenUp,
  markRetried,
  reopenRetried,
  type DeadLetterRow,
} from '../orders/dead-letter-store.js';

/**
 * What the dead-letter operations use: MySQL, the catalog (a dead letter's sale), Redis's release
 * (give up) and requeue (retry), and the log.
 */
export interface DeadLetterAdminDeps {
  db: Db;
  log: Logger;
  catalog: Pick<ActivityCatalog, 'resolve'>;
  sales: Pick<SaleStock, 'release'>;
  streams: Pick<SaleStreams, 'requeue'>;
}

export interface DeadLetterBody {
  reservationId: string;
  activityId: string;
  userId: string;
  quantity: number;
  streamId: string;
  deliveries: number;
  reason: string;
  restocked: number;
  status: string;
  createdAt: string;
  updatedAt: string;
}

const toBody = (r: DeadLetterRow): DeadLetterBody => ({
  reservationId: r.reservation_id,
  activityId: String(r.activity_id),
  userId: String(r.user_id),
  quantity: Number(r.quantity),
  streamId: r.stream_id,
  deliveries: Number(r.deliveries),
  reason: r.reason,
  restocked: Number(r.restocked),
  status: r.status,
  createdAt: new Date(r.created_at).toISOString(),
  updatedAt: new Date(r.updated_at).toISOString(),
});

/** At most this many rows per listing; an operator filters or pages with `?after=<id>` beyond it. */
const LIST_LIMIT = 1000;

export async function listDeadLetters(
  deps: Pick<DeadLetterAdminDeps, 'db'>,
  activityId: string,
): Promise<{ deadLetters: DeadLetterBody[] }> {
  const listed = await listDeadLetterRows(deps.db, activityId, LIST_LIMIT);
  return { deadLetters: listed.map(toBody) };
}

async function load(deps: Pick<DeadLetterAdminDeps, 'catalog' | 'db'>, reservationId: string) {
  const row = await deadLetterOf(deps.db, reservationId);
  if (!row) throw new ContractError('not_found', `no dead letter for reservation ${reservationId}`);
  const payload = JSON.parse(row.payload) as Partial<ReservationEvent>;
  const event: ReservationEvent = {
    streamId: row.stream_id,
    reservationId: row.reservation_id,
    requestId: payload.requestId ?? `retry-${row.id}`,
    userId: String(row.user_id),
    quantity: Number(row.quantity),
    traceId: payload.traceId ?? '',
    ts: payload.ts ?? 0,
  };
  const sale = await deps.catalog.resolve(String(row.activity_id));
  const target = { ...sale, paymentTimeoutSeconds: 0 };
  return { row, event, target };
}

export async function giveUpDeadLetter(deps: Omit<DeadLetterAdminDeps, 'streams'>, reservationId: string) {
  const { row, event, target } = await load(deps, reservationId);
  if (row.status === DeadLetterStatus.RETRIED)
    throw new ContractError('conflict', 'this reservation was re-queued for settlement; it cannot be given up now');
  const restocked = await compensate(deps.db, deps.sales, target, event);
  if (restocked === null) throw notReadyError(NOT_RECOVERED);
  await markGivenUp(deps.db, reservationId, restocked);
  deps.log.warn({ activityId: target.activityId, reservationId, restocked }, 'dead letter given up');
  return { reservationId, status: DeadLetterStatus.GIVEN_UP, restocked };
}

const NOT_RECOVERED = 'Redis has no stock for this sale: run recover first';

const REQUEUE_REFUSALS = {
  not_released: 'compensation has not released this reservation yet; try again shortly',
  holds_other: 'the user holds another reservation in this sale now; retrying would sell twice',
  sold_out: 'the units compensation gave back were sold again; nothing to retry with',
  denied: 'the user is on the deny list now; their units stay on sale (give the dead letter up instead)',
} as const;

export async function retryDeadLetter(deps: Omit<DeadLetterAdminDeps, 'sales'>, reservationId: string) {
  const { row, event, target } = await load(deps, reservationId);
  if (row.status === DeadLetterStatus.GIVEN_UP)
    throw new ContractError('conflict', 'this dead letter was given up; it cannot be retried');
  if (await hasOrderOfReservation(deps.db, ledgerOf(target), reservationId))
    throw new ContractError('conflict', 'this reservation is settled already');
  // MySQL first: settle.ts must see `retried` before the Stream carries the reservation again. A
  // crash before the script runs leaves `retried` with nothing queued: retrying again repairs it.
  await markRetried(deps.db, reservationId);
  const requeued = await deps.streams.requeue(target, event);
  if (requeued.kind === 'requeued' || requeued.kind === 'already') {
    deps.log.warn({ activityId: target.activityId, reservationId }, 'dead letter re-queued for settlement');
    return { reservationId, status: DeadLetterStatus.RETRIED, requeued: requeued.kind === 'requeued' };
  }
  if (row.status === DeadLetterStatus.OPEN) await reopenRetried(deps.db, reservationId);
  if (requeued.kind === 'not_warmed') throw notReadyError(NOT_RECOVERED);
  throw new ContractError('conflict', REQUEUE_REFUSALS[requeued.kind]);
}
