/** lua/abandon-2.lua: a borrow given up at home, so its user may try again and its lent units go back. */
import { num, unknownCode, type Script } from './script.js';

export const AbandonCode = { ABANDONED: 1, ALREADY: 2, CONFIRMED: -1, TOO_FRESH: -2, UNKNOWN: -3 } as const;

export interface AbandonArgs {
  reservationId: string;
  /** Only a borrow marked before this (ms) is given up; 0 = any age. */
  markedBefore: number;
}

export type AbandonReply = 'abandoned' | 'already' | 'confirmed' | 'too_fresh' | 'unknown';

const KIND_OF_CODE: Record<number, AbandonReply> = {
  [AbandonCode.ABANDONED]: 'abandoned',
  [AbandonCode.ALREADY]: 'already',
  [AbandonCode.CONFIRMED]: 'confirmed',
  [AbandonCode.TOO_FRESH]: 'too_fresh',
  [AbandonCode.UNKNOWN]: 'unknown',
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
