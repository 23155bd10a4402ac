/** lua/warmup-4.lua: one bucket's stock, config and consumer group, never resetting a sale in progress. */
import type { ActivitySwitch } from '../../../contract/activity.js';
import { CONSUMER_GROUP } from '../keys.js';
import { num, unknownCode, type Script } from './script.js';
import { ReplyCode } from './reply-codes.js';

export interface WarmupArgs {
  stock: number;
  state: ActivitySwitch;
  maxPerUser: number;
}

/** One bucket's answer: loaded now, or already warm, with its figures; or it has history (no reset). */
export type WarmupReply = { kind: 'loaded' | 'already'; stock: number; holders: number } | { kind: 'has_history' };

export const warmupScript: Script<WarmupArgs, WarmupReply> = {
  name: 'warmup',
  keys: (k) => [k.stock, k.holders, k.events, k.config],
  args: (a) => [a.stock, a.state, a.maxPerUser, CONSUMER_GROUP],
  decode(reply) {
    const code = num(reply[0]);
    if (code === ReplyCode.HAS_HISTORY) return { kind: 'has_history' };
    if (code !== ReplyCode.DONE && code !== ReplyCode.ALREADY) throw unknownCode('warmup', code);
    return { kind: code === ReplyCode.DONE ? 'loaded' : 'already', stock: num(reply[1]), holders: num(reply[2]) };
  },
};
