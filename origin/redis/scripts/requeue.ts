/** lua/requeue-5.lua: an admin's retry of a dead-lettered reservation, appended to the Stream again. */
import type { ReservationEvent } from '../reservation-event.js';
import { num, unknownCode, type Script } from './script.js';
import { ReplyCode } from './reply-codes.js';

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
  [ReplyCode.ALREADY]: 'already',
  [ReplyCode.NOT_WARMED]: 'not_warmed',
  [ReplyCode.NOT_RELEASED]: 'not_released',
  [ReplyCode.HOLDS_OTHER]: 'holds_other',
  [ReplyCode.SOLD_OUT]: 'sold_out',
  [ReplyCode.DENIED]: 'denied',
};

export const requeueScript: Script<RequeueArgs, RequeueResult> = {
  name: 'requeue',
  keys: (k) => [k.stock, k.holders, k.events, k.released, k.denied],
  args: (a) => [a.reservationId, a.userId, a.quantity, a.requestId, a.traceId, a.now],
  decode(reply) {
    const code = num(reply[0]);
    if (code === ReplyCode.DONE) return { kind: 'requeued', stock: num(reply[1]) };
    const kind = KIND_OF_CODE[code];
    if (!kind) throw unknownCode('requeue', code);
    return { kind } as RequeueResult;
  },
};
