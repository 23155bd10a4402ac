/** lua/release-3.lua: compensation — a reservation's units back to the bucket's stock, once, capped by MySQL. */
import { num, unknownCode, type Script } from './script.js';
import { ReplyCode } from './reply-codes.js';

export type ReleaseResult =
  { kind: 'released'; restocked: number } | { kind: 'already'; restocked: number } | { kind: 'not_warmed' };

export interface ReleaseArgs {
  reservationId: string;
  userId: string;
  quantity: number;
  /** The most units the bucket's stock may hold afterwards; -1 = give nothing back. */
  cap: number;
}

export const releaseScript: Script<ReleaseArgs, ReleaseResult> = {
  name: 'release',
  keys: (k) => [k.stock, k.holders, k.released],
  args: (a) => [a.reservationId, a.userId, a.quantity, a.cap],
  decode(reply) {
    const code = num(reply[0]);
    if (code === ReplyCode.NOT_WARMED) return { kind: 'not_warmed' };
    if (code === ReplyCode.DONE) return { kind: 'released', restocked: num(reply[1]) };
    if (code === ReplyCode.ALREADY) return { kind: 'already', restocked: num(reply[1]) };
    throw unknownCode('release', code);
  },
};
