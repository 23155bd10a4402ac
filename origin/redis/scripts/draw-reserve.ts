/**
 * lua/draw-reserve-6.lua: the lottery draw's winners of one batch, in draw order, each decided by the
 * reserve rule a purchase uses (lua/includes/reserve-rule.lua) — the outcome of one reserve-6 call
 * after another, for one round trip per batch. Single-bucket sales only. The deny list
 * is checked for each winner; eligibility is the draw's own decision. Each winner's answer is a
 * ReserveOutcome, as a purchase's: never borrow, pending or not_eligible here.
 */
import { newReservationId } from '../../../contract/ids.js';
import type { ActivityKeys } from '../keys.js';
import { decodeReserve, type ReserveOutcome } from './reserve.js';
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

/** Slots per winner in the script's reply: code, reservationId or '', remaining or 0. */
const STRIDE = 3;

/** One winner's three slots of the reply, by the reserve rule's one decoder. */
function decodeOne(reply: Reply, at: number): ReserveOutcome {
  const decoded = decodeReserve(reply, at, 'draw-reserve');
  // One bucket never borrows, and eligibility is not checked here.
  if (decoded.kind === 'borrow' || decoded.kind === 'pending' || decoded.kind === 'not_eligible')
    throw unknownCode('draw-reserve', num(reply[at]));
  return decoded;
}

export const drawReserveScript: Script<DrawReserveInput, ReserveOutcome[]> = {
  name: 'draw-reserve',
  keys: (k: ActivityKeys) => [k.stock, k.holders, k.events, k.config, k.borrowing, k.denied],
  args: ({ activityId, winners, now }) => {
    const args: (string | number)[] = [now];
    for (const w of winners) args.push(w.userId, w.quantity, newReservationId(activityId, now), w.requestId, w.traceId);
    return args;
  },
  decode: (reply) => {
    if (reply.length % STRIDE !== 0) throw new Error(`draw-reserve answered ${reply.length} slots, not 3 a winner`);
    const results = new Array<ReserveOutcome>(reply.length / STRIDE);
    for (let i = 0; i < results.length; i++) results[i] = decodeOne(reply, i * STRIDE);
    return results;
  },
};
