/**
 * lua/draw-reserve-6.lua: the lottery draw's winners of one batch, in draw order, each decided by the
 * reserve rule a purchase uses (lua/includes/reserve-rule.lua) — the outcome of one reserve-6 call
 * after another, for one round trip per batch (issue 30.1). Single-bucket sales only. The deny list
 * is checked for each winner; eligibility is the draw's own decision.
 */
import { newReservationId } from '../../../contract/ids.js';
import type { ActivityKeys } from '../keys.js';
import { ReserveCode } from './reserve.js';
import { num, unknownCode, type Reply, type Script } from './script.js';

/** One winner to reserve for, in draw order. */
export interface DrawReservation {
  userId: string;
  quantity: number;
  requestId: string;
  traceId: string;
}

export interface DrawReserveInput {
  activityId: string;
  winners: readonly DrawReservation[];
  now: number;
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

const KIND_OF_CODE: Record<number, Exclude<DrawReserveResult['kind'], 'reserved' | 'repeat'>> = {
  [ReserveCode.SOLD_OUT]: 'sold_out',
  [ReserveCode.INSUFFICIENT_STOCK]: 'insufficient_stock',
  [ReserveCode.LIMIT_EXCEEDED]: 'limit_exceeded',
  [ReserveCode.PAUSED]: 'paused',
  [ReserveCode.ENDED]: 'ended',
  [ReserveCode.NOT_WARMED]: 'not_warmed',
  [ReserveCode.DENIED]: 'denied',
};

/** One winner's three slots of the reply. */
function decodeOne(reply: Reply, at: number): DrawReserveResult {
  const code = num(reply[at]);
  if (code === ReserveCode.OK)
    return { kind: 'reserved', reservationId: String(reply[at + 1]), remaining: num(reply[at + 2]) };
  if (code === ReserveCode.EXISTS) return { kind: 'repeat', reservationId: String(reply[at + 1]) };
  const kind = KIND_OF_CODE[code];
  if (!kind) throw unknownCode('draw-reserve', code);
  return { kind };
}

export const drawReserveScript: Script<DrawReserveInput, DrawReserveResult[]> = {
  name: 'draw-reserve',
  keys: (k: ActivityKeys) => [k.stock, k.holders, k.events, k.config, k.borrowing, k.denied],
  args: ({ activityId, winners, now }) => {
    const args: (string | number)[] = [now];
    for (const w of winners)
      args.push(w.userId, w.quantity, newReservationId(activityId, now), w.requestId, w.traceId);
    return args;
  },
  decode: (reply) => {
    if (reply.length % STRIDE !== 0) throw new Error(`draw-reserve answered ${reply.length} slots, not 3 a winner`);
    const results: DrawReserveResult[] = new Array(reply.length / STRIDE);
    for (let i = 0; i < results.length; i++) results[i] = decodeOne(reply, i * STRIDE);
    return results;
  },
};
