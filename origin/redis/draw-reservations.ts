/**
 * The lottery draw's reservations in batches (issue 30.1): one call of lua/draw-reserve-6.lua decides
 * a batch of winners in draw order, each by the reserve rule a purchase uses
 * (lua/includes/reserve-rule.lua), one after the other inside the script — the same outcome as one
 * reserve-6 call per winner, for one round trip per batch. This module owns the script's KEYS/ARGV
 * layout and the decoding of its reply; the stock store calls it for single-bucket sales.
 */
import { newReservationId } from '../../contract/ids.js';
import type { ActivityKeys } from './keys.js';
import { ReserveCode, type ScriptCall } from './scripts.js';

/** One winner to reserve for, in draw order. */
export interface DrawReservation {
  userId: string;
  quantity: number;
  requestId: string;
  traceId: string;
}

/** What the reserve rule decided for one winner of a batch (reserve-6's codes; never borrow or pending). */
export type DrawReserveResult =
  | { kind: 'reserved'; reservationId: string; remaining: number }
  | { kind: 'repeat'; reservationId: string }
  | { kind: 'sold_out' }
  | { kind: 'insufficient_stock' }
  | { kind: 'limit_exceeded' }
  | { kind: 'paused' }
  | { kind: 'ended' }
  | { kind: 'not_warmed' }
  | { kind: 'denied' };

/** Slots per winner in the script's reply: code, reservationId or '', remaining or 0. */
const STRIDE = 3;

/**
 * Reserves for `winners` (a batch, in draw order) on the sale's one bucket: the deny list is checked
 * for each, eligibility is not (the draw decided it). Answers one result per winner, in order.
 */
export async function reserveDrawBatch(
  drawReserve: ScriptCall,
  keys: ActivityKeys,
  activityId: string,
  winners: readonly DrawReservation[],
  now = Date.now(),
): Promise<DrawReserveResult[]> {
  if (winners.length === 0) return [];
  const args: (string | number)[] = [now];
  for (const w of winners) args.push(w.userId, w.quantity, newReservationId(activityId, now), w.requestId, w.traceId);
  const reply = await drawReserve(
    [keys.stock, keys.holders, keys.events, keys.config, keys.borrowing, keys.denied],
    args,
  );
  if (reply.length !== winners.length * STRIDE)
    throw new Error(`draw-reserve answered ${reply.length} slots for ${winners.length} winners`);
  const results: DrawReserveResult[] = new Array(winners.length);
  for (let i = 0; i < winners.length; i++) results[i] = decodeOne(reply, i * STRIDE);
  return results;
}

/** One winner's three slots of the reply. */
function decodeOne(reply: (string | number)[], at: number): DrawReserveResult {
  const code = Number(reply[at]);
  switch (code) {
    case ReserveCode.OK:
      return { kind: 'reserved', reservationId: String(reply[at + 1]), remaining: Number(reply[at + 2]) };
    case ReserveCode.EXISTS:
      return { kind: 'repeat', reservationId: String(reply[at + 1]) };
    case ReserveCode.SOLD_OUT:
      return { kind: 'sold_out' };
    case ReserveCode.INSUFFICIENT_STOCK:
      return { kind: 'insufficient_stock' };
    case ReserveCode.LIMIT_EXCEEDED:
      return { kind: 'limit_exceeded' };
    case ReserveCode.PAUSED:
      return { kind: 'paused' };
    case ReserveCode.ENDED:
      return { kind: 'ended' };
    case ReserveCode.NOT_WARMED:
      return { kind: 'not_warmed' };
    case ReserveCode.DENIED:
      return { kind: 'denied' };
    default:
      throw new Error(`draw-reserve script returned unknown code ${code}`);
  }
}
