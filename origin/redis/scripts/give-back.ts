/** lua/give-back-2.lua: a given-up borrow's lent units back to the donor's stock. */
import { num, unknownCode, type Script } from './script.js';

export const GiveBackCode = { RETURNED: 1, NOTHING: 2, NOT_WARMED: -1 } as const;

/** true: the units went back now. */
export const giveBackScript: Script<{ reservationId: string }, boolean> = {
  name: 'give-back',
  keys: (k) => [k.stock, k.lent],
  args: (a) => [a.reservationId],
  decode(reply) {
    const code = num(reply[0]);
    if (code === GiveBackCode.RETURNED) return true;
    if (code === GiveBackCode.NOTHING || code === GiveBackCode.NOT_WARMED) return false;
    throw unknownCode('give-back', code);
  },
};
