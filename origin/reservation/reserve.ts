/**
 * The reserve decision: the store's reserve (one EVALSHA of lua/reserve-6.lua), its outcome
 * translated to the contract. The script also applies the deny list and the sale's eligibility
 * rule against the claims the edge forwarded (origin/access/sale-rules.ts), so a purchase and a
 * waiting-room turn are refused here even when the edge's copy of the rules is stale.
 * The in-process sold-out flag skips the script but never the holder lookup, so a holder's repeat
 * still gets its reservation.
 */
import { ContractError, type ErrorCode } from '../../contract/errors.js';
import { REFUSALS, refusalError } from '../../contract/refusals.js';
import type { ReserveRequest } from '../../contract/reservation.js';
import { isShadowForwarded, shadowMismatch } from '../../contract/shadow.js';
import type { Metrics } from '../platform/metrics.js';
import type { FailoverGate } from '../recovery/failover-gate.js';
import { scriptRefusalError } from '../redis/script-refusals.js';
import type { ReservationRequests } from '../redis/reservation-requests.js';
import type { ActivityCatalog } from '../sale/catalog.js';
import type { SnapshotPublisher } from '../sale/snapshot-publisher.js';
import type { SoldOutFlags } from '../sale/sold-out.js';
import type { StockWatch } from './stock-watch.js';

/** What the reserve decision uses: the gates in front of the script, the script, and who hears of its outcome. */
export interface ReserveDeps {
  /** Sales closed after a Redis failover until recovery proves their state. */
  failover: Pick<FailoverGate, 'isClosed'>;
  catalog: Pick<ActivityCatalog, 'resolve'>;
  soldOut: Pick<SoldOutFlags, 'has'>;
  requests: Pick<ReservationRequests, 'reserve' | 'repeatOf'>;
  /** Sets the sold-out flag (and pushes the edge) when the script says so. */
  publisher: Pick<SnapshotPublisher, 'setSoldOut'>;
  stockWatch: Pick<StockWatch, 'observe'>;
  metrics: Metrics;
}

/** The reserve decision as the answer needs it: a new reservation or the one the caller already holds. */
export interface ReserveDecision {
  /** true: granted now (202); false: the caller already held it (200). */
  created: boolean;
  reservationId: string;
}

/** The label of seckill_reserve_total: a grant, a repeat, or the contract code of the refusal. */
type Outcome = 'ok' | 'exists' | ErrorCode;

export async function reserve(deps: ReserveDeps, req: ReserveRequest, traceId: string): Promise<ReserveDecision> {
  const started = performance.now();
  let outcome: Outcome = 'unavailable';
  try {
    const result = await decide(deps, req, traceId);
    outcome = result.created ? 'ok' : 'exists';
    return result;
  } catch (err) {
    if (err instanceof ContractError) outcome = err.code;
    throw err;
  } finally {
    // Shadow traffic in its own series (the real latency histogram stays the real buyers').
    if (isShadowForwarded(req.claims)) deps.metrics.shadowReserveOutcomes.inc({ code: outcome });
    else {
      deps.metrics.reserveOutcomes.inc({ code: outcome });
      deps.metrics.reserveLatency.observe({ code: outcome }, (performance.now() - started) / 1000);
    }
  }
}

/**
 * The edge's shadow check again (defence in depth, contract/shadow.ts): the forwarded shadow claim
 * must match the sale. The edge's claims are signed with the request, so they are the token's.
 */
export function assertShadowMatch(sale: { shadow?: boolean }, req: Pick<ReserveRequest, 'claims'>): void {
  const mismatch = shadowMismatch(sale.shadow === true, isShadowForwarded(req.claims));
  if (mismatch) throw refusalError(mismatch);
}

async function decide(deps: ReserveDeps, req: ReserveRequest, traceId: string): Promise<ReserveDecision> {
  // A Redis failover under this sale: closed until recovery proves its state (recovery/failover-watch.ts).
  if (deps.failover.isClosed(req.activityId)) throw refusalError(REFUSALS.recovering);
  let sale;
  try {
    sale = await deps.catalog.resolve(req.activityId);
  } catch (err) {
    if (err instanceof ContractError) throw err;
    throw refusalError(REFUSALS.lookupFailed, { cause: err });
  }
  assertShadowMatch(sale, req);

  // The sale's fields written out, not spread: a spread copies every field of the sale on every
  // request of the hot route.
  const result = deps.soldOut.has(req.activityId)
    ? await deps.requests.repeatOf(sale, req.userId)
    : await deps.requests.reserve({
        activityId: sale.activityId,
        skuId: sale.skuId,
        buckets: sale.buckets,
        userId: req.userId,
        quantity: req.quantity,
        requestId: req.requestId,
        traceId,
        claims: req.claims,
      });
  switch (result.kind) {
    case 'reserved':
      if (result.remaining === 0) deps.publisher.setSoldOut(req.activityId, true);
      else deps.stockWatch.observe(sale, result.remaining + req.quantity, result.remaining);
      return { created: true, reservationId: result.reservationId };
    case 'repeat':
      return { created: false, reservationId: result.reservationId };
    case 'sold_out':
      deps.publisher.setSoldOut(req.activityId, true);
      throw scriptRefusalError(result.kind);
    case 'unconfirmed':
      // REDIS_WAIT_REPLICAS: not on enough replicas, so not promised; the reservation lookup tells later.
      deps.metrics.reserveUnconfirmed.inc();
      throw scriptRefusalError(result.kind);
    default:
      // Insufficient stock leaves units for smaller requests, so no sold-out flag (docs/design.md §10).
      throw scriptRefusalError(result.kind);
  }
}
