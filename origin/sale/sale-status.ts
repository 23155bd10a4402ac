/**
 * The text status columns of `seckill_activity` (schema/001, 006), named once for SQL and TS alike:
 * the operator's switch (`state`) and the scheduled warm-up's step (`warmup_status`).
 */
import type { ActivitySwitch } from '../../contract/activity.js';

/** `seckill_activity.state`: the operator's switch (the contract's ACTIVITY_STATES, by name). */
export const ActivityState = { OPEN: 'open', PAUSED: 'paused', STOPPED: 'stopped' } as const satisfies Record<
  string,
  ActivitySwitch
>;

/** `seckill_activity.warmup_status` (schema/006): the scheduled warm-up's steps. */
export const WarmupStatus = {
  PENDING: 'pending',
  WARMING: 'warming',
  WARMED: 'warmed',
  VERIFYING: 'verifying',
  VERIFIED: 'verified',
  MISMATCH: 'mismatch',
} as const;
export type WarmupStatus = (typeof WarmupStatus)[keyof typeof WarmupStatus];
