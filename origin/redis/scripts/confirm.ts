/** lua/confirm-3.lua: a borrow's last step at home — pending becomes the reservation, its event appended. */
import { num, unknownCode, type Script } from './script.js';

export const ConfirmCode = { CONFIRMED: 1, ALREADY: 2, ABANDONED: -1 } as const;

export interface ConfirmArgs {
  userId: string;
  reservationId: string;
  quantity: number;
  donor: number;
  requestId: string;
  traceId: string;
  now: number;
}

/** true: the reservation stands (now or already); false: the borrow was given up meanwhile. */
export const confirmScript: Script<ConfirmArgs, boolean> = {
  name: 'confirm',
  keys: (k) => [k.holders, k.events, k.borrowing],
  args: (a) => [a.userId, a.reservationId, a.quantity, a.donor, a.requestId, a.traceId, a.now],
  decode(reply) {
    const code = num(reply[0]);
    if (code === ConfirmCode.CONFIRMED || code === ConfirmCode.ALREADY) return true;
    if (code === ConfirmCode.ABANDONED) return false;
    throw unknownCode('confirm', code);
  },
};
