/** lua/confirm-3.lua: a borrow's last step at home — pending becomes the reservation, its event appended. */
import { num, unknownCode, type Script } from './script.js';
import { ReplyCode } from './reply-codes.js';

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
    if (code === ReplyCode.DONE || code === ReplyCode.ALREADY) return true;
    if (code === ReplyCode.ABANDONED) return false;
    throw unknownCode('confirm', code);
  },
};
