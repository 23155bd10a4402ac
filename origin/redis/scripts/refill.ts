/**
 * lua/refill-2.lua: units back on sale once per id, never creating a stock key. The same script adds
 * a timed-out order's units (the `refilled` hash) and a tranche's share (the `tranches` hash).
 */
import { num, unknownCode, type Script } from './script.js';
import { ReplyCode } from './reply-codes.js';

export type RefillResult =
  { kind: 'refilled'; stock: number } | { kind: 'already'; stock: number } | { kind: 'not_warmed' };

export interface RefillArgs {
  /** The reservation (refill) or release (tranche) the units belong to. */
  id: string;
  units: number;
}

const decode: Script<RefillArgs, RefillResult>['decode'] = (reply) => {
  const code = num(reply[0]);
  if (code === ReplyCode.NOT_WARMED) return { kind: 'not_warmed' };
  if (code === ReplyCode.DONE) return { kind: 'refilled', stock: num(reply[1]) };
  if (code === ReplyCode.ALREADY) return { kind: 'already', stock: num(reply[1]) };
  throw unknownCode('refill', code);
};

/** A timed-out order's units, recorded in the bucket's `refilled` hash. */
export const refillScript: Script<RefillArgs, RefillResult> = {
  name: 'refill',
  keys: (k) => [k.stock, k.refilled],
  args: (a) => [a.id, a.units],
  decode,
};

/** A tranche's share of held-back units, recorded in the bucket's `tranches` hash. */
export const trancheScript: Script<RefillArgs, RefillResult> = {
  ...refillScript,
  keys: (k) => [k.stock, k.tranches],
};
