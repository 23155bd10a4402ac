/**
 * lua/reserve-6.lua: the one atomic decision of a purchase on one bucket — state, deny list,
 * eligibility, per-user limit, stock — and on a grant DECRBY, holder, XADD of the event.
 */
import type { Claims } from '../../../contract/eligibility.js';
import type { ReserveRefusal } from '../../../contract/reserve-outcomes.js';
import type { ActivityKeys } from '../keys.js';
import type { Sale } from '../sale.js';
import { num, unknownCode, type Reply, type Script } from './script.js';
import { ReplyCode } from './reply-codes.js';

export interface ReserveInput extends Sale {
  userId: string;
  quantity: number;
  requestId: string;
  traceId: string;
  /** The user's JWT claims the edge verified; the script checks the sale's eligibility rule against them. */
  claims?: Claims;
  /**
   * The lottery draw decides eligibility itself (the claims stored with each entry, under the rule in
   * force at the close): the script skips the rule.
   */
  eligibilityDecided?: boolean;
}

/**
 * What a reservation request comes to in Redis: the one outcome type of the reserve rule, for a
 * purchase, a waiting-room turn, a borrow and the draw alike. Its kinds are those of the contract's
 * table (contract/reserve-outcomes.ts), which maps each to its answer.
 */
export type ReserveOutcome =
  | { kind: 'reserved'; reservationId: string; remaining: number }
  | { kind: 'repeat'; reservationId: string }
  /**
   * Granted on the primary, but `WAIT` did not see it on REDIS_WAIT_REPLICAS replicas in time: a
   * failover now could lose it, so it is not promised. The holder lookup tells later what became of it.
   */
  | { kind: 'unconfirmed'; reservationId: string }
  /**
   * Turned away: no stock or too little, over the limit, the sale paused, ended or not warmed, the
   * user denied or not eligible, or (`busy`) the user's own borrow from another bucket still in flight.
   */
  | { kind: Exclude<ReserveRefusal, 'unconfirmed'> };

/** What the script answered; `borrow` and `pending` only come from a sale with buckets. */
export type ReserveReply =
  | Exclude<ReserveOutcome, { kind: 'busy' } | { kind: 'unconfirmed' }>
  /** This bucket cannot serve: the user is marked pending here; `homeStock` is what it still has. */
  | { kind: 'borrow'; reservationId: string; homeStock: number }
  /** The same user's borrow is in flight. */
  | { kind: 'pending' };

/** ARGV of one call. */
export interface ReserveArgs {
  userId: string;
  quantity: number;
  /** The new reservation's id (used only when granted). */
  reservationId: string;
  requestId: string;
  traceId: string;
  now: number;
  /** Other buckets exist: mark pending and answer `borrow` when this one cannot serve. */
  mayBorrow: boolean;
  claims?: Claims;
  checkEligibility: boolean;
}

/** The claims as the scripts read them: JSON, `{}` when the user's JWT carried none. */
export const claimsArg = (claims: Claims | undefined) => (claims ? JSON.stringify(claims) : '{}');

const KIND_OF_CODE: Record<number, ReserveReply['kind']> = {
  [ReplyCode.PENDING]: 'pending',
  [ReplyCode.SOLD_OUT]: 'sold_out',
  [ReplyCode.INSUFFICIENT_STOCK]: 'insufficient_stock',
  [ReplyCode.LIMIT_EXCEEDED]: 'limit_exceeded',
  [ReplyCode.PAUSED]: 'paused',
  [ReplyCode.ENDED]: 'ended',
  [ReplyCode.NOT_WARMED]: 'not_warmed',
  [ReplyCode.DENIED]: 'denied',
  [ReplyCode.NOT_ELIGIBLE]: 'not_eligible',
};

/**
 * The one decoding of the reserve rule's answer (`{code, reservationId?, remaining?}`), from slot
 * `at` of the reply: reserve-6 answers one, draw-reserve-6 three slots a winner.
 */
export function decodeReserve(reply: Reply, at = 0, script = 'reserve'): ReserveReply {
  const code = num(reply[at]);
  switch (code) {
    case ReplyCode.DONE:
      return { kind: 'reserved', reservationId: String(reply[at + 1]), remaining: num(reply[at + 2]) };
    case ReplyCode.ALREADY:
      return { kind: 'repeat', reservationId: String(reply[at + 1]) };
    case ReplyCode.BORROW:
      return { kind: 'borrow', reservationId: String(reply[at + 1]), homeStock: num(reply[at + 2]) };
  }
  const kind = KIND_OF_CODE[code];
  if (!kind) throw unknownCode(script, code);
  return { kind } as ReserveReply;
}

export const reserveScript: Script<ReserveArgs, ReserveReply> = {
  name: 'reserve',
  keys: (k: ActivityKeys) => [k.stock, k.holders, k.events, k.config, k.borrowing, k.denied],
  args: (a) => [
    a.userId,
    a.quantity,
    a.reservationId,
    a.requestId,
    a.traceId,
    a.now,
    a.mayBorrow ? 1 : 0,
    claimsArg(a.claims),
    a.checkEligibility ? 1 : 0,
  ],
  decode: (reply) => decodeReserve(reply),
};
