/** lua/take-3.lua: a borrow's donor step — q units out of the donor's stock into its `lent` hash. */
import { num, unknownCode, type Script } from './script.js';

export const TakeCode = { TAKEN: 1, ALREADY: 2, NOT_WARMED: -1, CLOSED: -2, SHORT: -4 } as const;

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
    if (code === TakeCode.TAKEN || code === TakeCode.ALREADY) return true;
    if (code === TakeCode.NOT_WARMED || code === TakeCode.CLOSED || code === TakeCode.SHORT) return false;
    throw unknownCode('take', code);
  },
};
