/** lua/requeue-5.lua: an admin's retry of a dead-lettered reservation, appended to the Stream again. */
import type { ReservationEvent } from '../reservation-event.js';
import { num, unknownCode, type Script } from './script.js';

export const RequeueCode = {
  REQUEUED: 1,
  ALREADY: 2,
  NOT_WARMED: -1,
  NOT_RELEASED: -2,
  HOLDS_OTHER: -3,
  SOLD_OUT: -4,
  DENIED: -8,
} as const;

export type RequeueResult =
  | { kind: 'requeued'; stock: number }
  | { kind: 'already' }
  | { kind: 'not_warmed' }
  | { kind: 'not_released' }
  | { kind: 'holds_other' }
  | { kind: 'sold_out' }
  | { kind: 'denied' };

export type RequeueArgs = Pick<ReservationEvent, 'reservationId' | 'userId' | 'quantity' | 'requestId' | 'traceId'> & {
  now: number;
};

const KIND_OF_CODE: Record<number, RequeueResult['kind']> = {
  [RequeueCode.ALREADY]: 'already',
  [RequeueCode.NOT_WARMED]: 'not_warmed',
  [RequeueCode.NOT_RELEASED]: 'not_released',
  [RequeueCode.HOLDS_OTHER]: 'holds_other',
  [RequeueCode.SOLD_OUT]: 'sold_out',
  [RequeueCode.DENIED]: 'denied',
};

export const requeueScript: Script<RequeueArgs, RequeueResult> = {
  name: 'requeue',
  keys: (k) => [k.stock, k.holders, k.events, k.released, k.denied],
  args: (a) => [a.reservationId, a.userId, a.quantity, a.requestId, a.traceId, a.now],
  decode(reply) {
    const code = num(reply[0]);
    if (code === RequeueCode.REQUEUED) return { kind: 'requeued', stock: num(reply[1]) };
    const kind = KIND_OF_CODE[code];
    if (!kind) throw unknownCode('requeue', code);
    return { kind } as RequeueResult;
  },
};
