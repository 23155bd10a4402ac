/** lua/take-3.lua: a borrow's donor step — q units out of the donor's stock into its `lent` hash. */
import { num, unknownCode, type Script } from './script.js';
import { ReplyCode } from './reply-codes.js';

export interface TakeArgs {
  reservationId: string;
  quantity: number;
  home: number;
}

/** true: the units are lent (now or by an earlier call); false: this donor cannot lend. */
export const takeScript: Script<TakeArgs, boolean> = {
  name: 'take',
  keys: (k) => [k.stock, k.lent, k.config],
  args: (a) => [a.reservationId, a.quantity, a.home],
  decode(reply) {
    const code = num(reply[0]);
    if (code === ReplyCode.DONE || code === ReplyCode.ALREADY) return true;
    if (code === ReplyCode.NOT_WARMED || code === ReplyCode.NOT_OPEN || code === ReplyCode.SHORT) return false;
    throw unknownCode('take', code);
  },
};
