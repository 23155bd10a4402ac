/** lua/abandon-2.lua: a borrow given up at home, so its user may try again and its lent units go back. */
import { num, unknownCode, type Script } from './script.js';
import { ReplyCode } from './reply-codes.js';

export interface AbandonArgs {
  reservationId: string;
  /** Only a borrow marked before this (ms) is given up; 0 = any age. */
  markedBefore: number;
}

export type AbandonReply = 'abandoned' | 'already' | 'confirmed' | 'too_fresh' | 'unknown';

const KIND_OF_CODE: Record<number, AbandonReply> = {
  [ReplyCode.DONE]: 'abandoned',
  [ReplyCode.ALREADY]: 'already',
  [ReplyCode.CONFIRMED]: 'confirmed',
  [ReplyCode.TOO_FRESH]: 'too_fresh',
  [ReplyCode.UNKNOWN]: 'unknown',
};

export const abandonScript: Script<AbandonArgs, AbandonReply> = {
  name: 'abandon',
  keys: (k) => [k.holders, k.borrowing],
  args: (a) => [a.reservationId, a.markedBefore],
  decode(reply) {
    const code = num(reply[0]);
    const kind = KIND_OF_CODE[code];
    if (!kind) throw unknownCode('abandon', code);
    return kind;
  },
};
