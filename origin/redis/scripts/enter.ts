/** lua/enter-6.lua: one lottery entry per user, under the deny list and the eligibility rule. */
import type { Claims } from '../../../contract/eligibility.js';
import { claimsArg } from './reserve.js';
import { num, unknownCode, type Script } from './script.js';
import { ReplyCode } from './reply-codes.js';

export type EnterResult =
  | { kind: 'entered'; entrants: number }
  | { kind: 'repeat'; quantity: number }
  | { kind: 'limit_exceeded' }
  | { kind: 'closed' }
  | { kind: 'paused' }
  | { kind: 'ended' }
  | { kind: 'not_warmed' }
  | { kind: 'denied' }
  | { kind: 'not_eligible' };

export interface EnterArgs {
  userId: string;
  quantity: number;
  claims?: Claims;
}

const KIND_OF_CODE: Record<number, EnterResult['kind']> = {
  [ReplyCode.LIMIT_EXCEEDED]: 'limit_exceeded',
  [ReplyCode.CLOSED]: 'closed',
  [ReplyCode.PAUSED]: 'paused',
  [ReplyCode.ENDED]: 'ended',
  [ReplyCode.NOT_WARMED]: 'not_warmed',
  [ReplyCode.DENIED]: 'denied',
  [ReplyCode.NOT_ELIGIBLE]: 'not_eligible',
};

export const enterScript: Script<EnterArgs, EnterResult> = {
  name: 'enter',
  keys: (k) => [k.entrants, k.config, k.draw, k.denied, k.entryList, k.entrantClaims],
  args: (a) => [a.userId, a.quantity, claimsArg(a.claims)],
  decode(reply) {
    const code = num(reply[0]);
    if (code === ReplyCode.DONE) return { kind: 'entered', entrants: num(reply[1]) };
    if (code === ReplyCode.ALREADY) return { kind: 'repeat', quantity: num(reply[1]) };
    const kind = KIND_OF_CODE[code];
    if (!kind) throw unknownCode('enter', code);
    return { kind } as EnterResult;
  },
};
