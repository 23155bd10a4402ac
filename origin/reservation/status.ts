/**
 * Where a reservation stands (docs/design.md §3 body): `queued` while only Redis knows it, then the order's
 * state from MySQL (`ordered`, `paid`, `timeout`), or `failed` when settlement gave up on it.
 */
import { ContractError } from '../../contract/errors.js';
import { activityOfReservation } from '../../contract/ids.js';
import type { ReservationBody } from '../../contract/reservation.js';
import type { Db } from '../platform/db/pool.js';
import type { ReservationRequests } from '../redis/reservation-requests.js';
import type { ActivityCatalog } from '../sale/catalog.js';
import { deadLetterOwner } from '../orders/dead-letter-store.js';
import { OrderStatus } from '../orders/order-status.js';
import { ledgerOf } from '../orders/ledger.js';
import { orderOfReservation, orderOfUser, type OrderRow } from '../orders/order-store.js';

/** What the reservation lookup uses: the sale's catalog, the order and dead-letter rows, the holder in Redis. */
export interface ReservationStatusDeps {
  catalog: Pick<ActivityCatalog, 'resolve'>;
  db: Db;
  requests: Pick<ReservationRequests, 'holderOf'>;
}

/** The body's name for each order status. */
const STATUS_NAME: Record<OrderStatus, ReservationBody['status']> = {
  [OrderStatus.PENDING]: 'ordered',
  [OrderStatus.PAID]: 'paid',
  [OrderStatus.TIMEOUT]: 'timeout',
};

function fromOrder(o: OrderRow): ReservationBody {
  return {
    reservationId: o.reservation_id,
    status: STATUS_NAME[o.status] ?? 'ordered',
    orderNo: o.order_no,
    expireAt: new Date(o.expire_at).toISOString(),
  };
}

/** `GET /internal/reservations/:id?userId=` — 404 unknown, 403 someone else's. */
export async function reservationStatus(
  deps: ReservationStatusDeps,
  reservationId: string,
  userId: string,
): Promise<ReservationBody> {
  const activityId = activityOfReservation(reservationId);
  if (!activityId) throw new ContractError('not_found', 'no such reservation');
  const sale = await deps.catalog.resolve(activityId).catch((err) => {
    if (err instanceof ContractError && err.code === 'not_found')
      throw new ContractError('not_found', 'no such reservation');
    throw err;
  });
  const order = await orderOfReservation(deps.db, ledgerOf(sale), reservationId);
  if (order) {
    if (String(order.user_id) !== userId)
      throw new ContractError('forbidden', 'this reservation belongs to someone else');
    return fromOrder(order);
  }
  const owner = await deadLetterOwner(deps.db, reservationId);
  if (owner) {
    if (owner !== userId) throw new ContractError('forbidden', 'this reservation belongs to someone else');
    return { reservationId, status: 'failed' };
  }
  const held = await deps.requests.holderOf(sale, userId);
  if (held === reservationId) return { reservationId, status: 'queued' };
  throw new ContractError('not_found', 'no such reservation');
}

/** `GET /internal/activities/:id/reservation?userId=` — the caller's own reservation, or 404. */
export async function reservationOfUser(
  deps: ReservationStatusDeps,
  activityId: string,
  userId: string,
): Promise<ReservationBody> {
  const sale = await deps.catalog.resolve(activityId);
  const order = await orderOfUser(deps.db, sale, userId);
  if (order) return fromOrder(order);
  const held = await deps.requests.holderOf(sale, userId);
  if (held) return reservationStatus(deps, held, userId);
  throw new ContractError('not_found', 'you hold no reservation in this sale');
}
