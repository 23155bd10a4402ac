/**
 * Admin routes of downstream order events (`Authorization: Bearer $ADMIN_TOKEN`): list parked
 * (or pending) events, send a parked one again. The /metrics gauges of the outbox are read here too.
 */
import { Hono } from 'hono';
import { ContractError } from '../../contract/errors.js';
import type { OriginConfig } from '../platform/config.js';
import type { Db } from '../platform/db/pool.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import { findOrderEvent, listOrderEvents, orderEventFigures, retryParked } from './order-event-admin-store.js';
import { ORDER_EVENT_TYPES, type OrderEventRow } from './order-event-store.js';
import { ledgerOfOrderNo, REAL_LEDGER } from './ledger.js';
import { adminToken } from '../platform/http/middleware.js';
import type { OriginEnv } from '../platform/http/types.js';

/** What the order-event admin routes use: the outbox rows, the operators' tokens, the log. */
export interface OrderEventRouteDeps {
  db: Db;
  log: Logger;
  config: Pick<OriginConfig, 'ADMIN_OPERATORS'>;
}

/** What the outbox gauges use: the outbox rows, the gauges, and whether order events are on. */
export interface OrderEventGaugeDeps {
  db: Db;
  metrics: Metrics;
  config: Pick<OriginConfig, 'ORDER_EVENTS_URL'>;
}

const LIST_LIMIT_MAX = 500;
const EVENT_ID = new RegExp(`^[A-Za-z0-9]{1,32}:(${ORDER_EVENT_TYPES.map((t) => t.replace('.', '\\.')).join('|')})$`);

/** A single row (listings leave batch rows out): its one event and its delivery state. */
function view(r: OrderEventRow) {
  const e = r.events[0]!;
  return {
    id: e.eventId,
    type: e.type,
    orderNo: e.orderNo,
    activityId: e.activityId,
    userId: e.userId,
    quantity: e.quantity,
    at: e.occurredAt.toISOString(),
    status: r.status,
    attempts: r.attempts,
    lastError: r.lastError,
    nextAttemptAt: r.nextAttemptAt.toISOString(),
    seq: r.seq,
  };
}

export function orderEventRoutes(deps: OrderEventRouteDeps) {
  const app = new Hono<OriginEnv>();
  app.use('/order-events', adminToken({ operators: deps.config.ADMIN_OPERATORS }));
  app.use('/order-events/*', adminToken({ operators: deps.config.ADMIN_OPERATORS }));

  // ?status=parked|pending (default parked) &after=<seq> &limit=1..500 (default 100); `next` pages on.
  app.get('/order-events', async (c) => {
    const status = c.req.query('status') ?? 'parked';
    if (status !== 'parked' && status !== 'pending')
      throw new ContractError('bad_request', 'status must be "parked" or "pending"');
    const after = c.req.query('after') ?? '0';
    if (!/^\d{1,20}$/.test(after)) throw new ContractError('bad_request', 'after must be a sequence number');
    const limitText = c.req.query('limit') ?? '100';
    const limit = Number(limitText);
    if (!/^\d{1,4}$/.test(limitText) || limit < 1 || limit > LIST_LIMIT_MAX)
      throw new ContractError('bad_request', `limit must be 1-${LIST_LIMIT_MAX}`);
    // The real outbox: a shadow sale's events are the rehearsal's, cleaned up with it.
    const rows = await listOrderEvents(deps.db, REAL_LEDGER, status, limit, after);
    return c.json({ events: rows.map(view), next: rows.length === limit ? rows[rows.length - 1]!.seq : null });
  });

  app.post('/order-events/:id/retry', async (c) => {
    const id = c.req.param('id');
    if (!EVENT_ID.test(id)) throw new ContractError('bad_request', 'event id must be <orderNo>:<order event type>');
    const ledger = ledgerOfOrderNo(id);
    if (!(await retryParked(deps.db, ledger, id))) {
      const event = await findOrderEvent(deps.db, ledger, id);
      if (!event)
        throw new ContractError('not_found', `no order event ${id} waiting on its own (delivered, or not failed yet)`);
      throw new ContractError('conflict', `order event ${id} is not parked (it is ${event.status})`);
    }
    deps.log.warn({ eventId: id }, 'parked order event sent back for delivery');
    return c.json({ id, status: 'pending' });
  });

  return app;
}

/** Sets the outbox gauges from MySQL; nothing when order events are off. */
export async function collectOrderEventGauges(deps: OrderEventGaugeDeps): Promise<void> {
  if (!deps.config.ORDER_EVENTS_URL) return;
  // Real events only: the alert on parked events watches real buyers' orders (docs/rehearsal.md).
  const f = await orderEventFigures(deps.db, REAL_LEDGER);
  deps.metrics.orderEventsBacklog.set(f.backlog);
  deps.metrics.orderEventsOldestAge.set(f.oldestAgeSeconds);
  deps.metrics.orderEventsParkedNow.set(f.parked);
}
