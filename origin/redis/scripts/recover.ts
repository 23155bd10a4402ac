/** lua/recover-9.lua: one bucket's Redis state rewritten from proven figures, all or nothing. */
import type { ActivitySwitch } from '../../../contract/activity.js';
import { CONSUMER_GROUP } from '../keys.js';
import type { ReservationEvent } from '../reservation-event.js';
import { num, unknownCode, type Script } from './script.js';
import { ReplyCode } from './reply-codes.js';

/** One bucket's share of a recovery. */
export interface RecoverArgs {
  stock: number;
  state: ActivitySwitch;
  maxPerUser: number;
  /** userId → reservationId */
  holders: Map<string, string>;
  /** reservationId → units given back */
  released: Map<string, number>;
  /** reservationId → units refilled */
  refilled: Map<string, number>;
  /** release id → this bucket's share of the units */
  tranches: Map<string, number>;
  /** Reservations appended to the Stream again. */
  restore: Omit<ReservationEvent, 'streamId'>[];
}

export type RecoverReply = { kind: 'recovered'; holders: number } | { kind: 'warm' } | { kind: 'no_stream' };

/** A map as the script reads it: its size, then its pairs. */
const pairs = (m: Map<string, string | number>) => [m.size, ...[...m].flat()];

export const recoverScript: Script<RecoverArgs, RecoverReply> = {
  name: 'recover',
  keys: (k) => [k.stock, k.holders, k.events, k.config, k.released, k.refilled, k.borrowing, k.lent, k.tranches],
  args: (a) => [
    a.stock,
    a.state,
    a.maxPerUser,
    CONSUMER_GROUP,
    ...pairs(a.holders),
    ...pairs(a.released),
    ...pairs(a.refilled),
    ...pairs(a.tranches),
    a.restore.length,
    ...a.restore.flatMap((e) => [e.reservationId, e.requestId, e.userId, e.quantity, e.traceId, e.ts]),
  ],
  decode(reply) {
    const code = num(reply[0]);
    if (code === ReplyCode.WARM) return { kind: 'warm' };
    if (code === ReplyCode.NO_STREAM) return { kind: 'no_stream' };
    if (code !== ReplyCode.DONE) throw unknownCode('recover', code);
    return { kind: 'recovered', holders: num(reply[2]) };
  },
};
