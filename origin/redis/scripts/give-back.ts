/** lua/give-back-2.lua: a given-up borrow's lent units back to the donor's stock. */
import { num, unknownCode, type Script } from './script.js';
import { ReplyCode } from './reply-codes.js';

/** true: the units went back now. */
export const giveBackScript: Script<{ reservationId: string }, boolean> = {
  name: 'give-back',
  keys: (k) => [k.stock, k.lent],
  args: (a) => [a.reservationId],
  decode(reply) {
    const code = num(reply[0]);
    if (code === ReplyCode.DONE) return true;
    if (code === ReplyCode.NOTHING_LENT || code === ReplyCode.NOT_WARMED) return false;
    throw unknownCode('give-back', code);
  },
};
