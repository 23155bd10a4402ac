/**
 * The settle decisions of a batch, without I/O: given what MySQL holds for the sale (read by
 * settle.ts inside its transaction), which reservations become orders and what happens to the
 * others. Per reservation, in Stream order:
 *   order exists for the reservation?               → duplicate delivery
 *   dead-lettered meanwhile?                         → the dead letter owns it
 *   the same user already has an order (another one) → surplus
 *   fewer units left than it needs?                 → insufficient stock
 *   else                                             → a winner: it becomes an order
 */
import type { ReservationEvent } from './event.js';

export type SettleOutcome = 'settled' | 'duplicate' | 'surplus' | 'dead_lettered' | 'insufficient_stock';

export interface SaleFacts {
  /** User → the reservation of the user's order in this sale (one order per user and sale). */
  orderOf: ReadonlyMap<string, string>;
  /** Reservations a dead letter owns (not retried). */
  deadLettered: ReadonlySet<string>;
  /** Units MySQL has left; Infinity when the stock row is not read first (the conditional UPDATE decides). */
  left: number;
}

export interface SettleDecision {
  /** Every reservation that is not a winner, with its outcome. */
  outcomes: Map<string, Exclude<SettleOutcome, 'settled'>>;
  /** The reservations to write as orders, in Stream order (at most one per user). */
  winners: ReservationEvent[];
}

export function decideSettlement(events: readonly ReservationEvent[], facts: SaleFacts): SettleDecision {
  const outcomes = new Map<string, Exclude<SettleOutcome, 'settled'>>();
  const orderOf = new Map(facts.orderOf);
  const winners: ReservationEvent[] = [];
  const won = new Set<string>();
  let left = facts.left;
  for (const e of events) {
    if (outcomes.has(e.reservationId) || won.has(e.reservationId)) continue;
    const owned = orderOf.get(e.userId);
    if (owned === e.reservationId) outcomes.set(e.reservationId, 'duplicate');
    else if (facts.deadLettered.has(e.reservationId)) outcomes.set(e.reservationId, 'dead_lettered');
    else if (owned !== undefined) outcomes.set(e.reservationId, 'surplus');
    else if (left < e.quantity) outcomes.set(e.reservationId, 'insufficient_stock');
    else {
      left -= e.quantity;
      orderOf.set(e.userId, e.reservationId);
      won.add(e.reservationId);
      winners.push(e);
    }
  }
  return { outcomes, winners };
}
