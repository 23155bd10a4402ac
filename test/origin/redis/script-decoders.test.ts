/**
 * Each script module's one decoder (origin/redis/scripts/): every return code of its Lua script
 * becomes its kind, an unknown code is an error, and the keys are laid out in the script's order.
 * The scripts' own codes against the real Redis: test/origin/redis/lua-scripts.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { activityKeys } from '../../../origin/redis/keys.js';
import { AbandonCode, abandonScript } from '../../../origin/redis/scripts/abandon.js';
import { ConfirmCode, confirmScript } from '../../../origin/redis/scripts/confirm.js';
import { EnterCode, enterScript } from '../../../origin/redis/scripts/enter.js';
import { GiveBackCode, giveBackScript } from '../../../origin/redis/scripts/give-back.js';
import { readScripts } from '../../../origin/redis/scripts/load.js';
import { RecoverCode, recoverScript } from '../../../origin/redis/scripts/recover.js';
import { RefillCode, refillScript, trancheScript } from '../../../origin/redis/scripts/refill.js';
import { ReleaseCode, releaseScript } from '../../../origin/redis/scripts/release.js';
import { RequeueCode, requeueScript } from '../../../origin/redis/scripts/requeue.js';
import { ReserveCode, reserveScript } from '../../../origin/redis/scripts/reserve.js';
import { TakeCode, takeScript } from '../../../origin/redis/scripts/take.js';
import { WarmupCode, warmupScript } from '../../../origin/redis/scripts/warmup.js';
import type { Script } from '../../../origin/redis/scripts/script.js';

const k = activityKeys('a1', 's1');
const UNKNOWN = 99;

/** Every code of the mirror decodes (none throws), and an unknown one throws naming the script. */
function decodesEveryCode(script: Script<never, unknown>, codes: Record<string, number>) {
  for (const code of Object.values(codes)) expect(() => script.decode([code, 'x', 3])).not.toThrow();
  expect(() => script.decode([UNKNOWN])).toThrow(`${script.name} script returned unknown code ${UNKNOWN}`);
}

describe('script modules', () => {
  it('each module lays out as many KEYS as its lua/<name>-<keys>.lua file declares', () => {
    const lua = readScripts();
    const modules = [
      reserveScript,
      enterScript,
      releaseScript,
      refillScript,
      trancheScript,
      warmupScript,
      requeueScript,
      recoverScript,
      takeScript,
      confirmScript,
      abandonScript,
      giveBackScript,
    ] as Script<never, unknown>[];
    for (const m of modules) expect([m.name, m.keys(k).length]).toEqual([m.name, lua.get(m.name)!.keys]);
    // A refill and a tranche add units by the same script, each recorded in its own hash.
    expect(refillScript.keys(k)).toEqual([k.stock, k.refilled]);
    expect(trancheScript.keys(k)).toEqual([k.stock, k.tranches]);
  });

  it('reserve: every code to its kind, granted and repeat with their reservation', () => {
    decodesEveryCode(reserveScript, ReserveCode);
    expect(reserveScript.decode([ReserveCode.OK, 'r1', 4])).toEqual({
      kind: 'reserved',
      reservationId: 'r1',
      remaining: 4,
    });
    expect(reserveScript.decode([ReserveCode.EXISTS, 'r1'])).toEqual({ kind: 'repeat', reservationId: 'r1' });
    expect(reserveScript.decode([ReserveCode.BORROW, 'r2', 0])).toEqual({
      kind: 'borrow',
      reservationId: 'r2',
      homeStock: 0,
    });
    expect(reserveScript.decode([ReserveCode.PAUSED])).toEqual({ kind: 'paused' });
    expect(reserveScript.decode([ReserveCode.NOT_WARMED])).toEqual({ kind: 'not_warmed' });
    expect(reserveScript.decode([ReserveCode.NOT_ELIGIBLE])).toEqual({ kind: 'not_eligible' });
  });

  it('reserve: ARGV in the script order, claims as JSON and `{}` without', () => {
    const args = {
      userId: 'u1',
      quantity: 2,
      reservationId: 'r1',
      requestId: 'q1',
      traceId: 't1',
      now: 5,
      mayBorrow: true,
      checkEligibility: false,
    };
    expect(reserveScript.args(args)).toEqual(['u1', 2, 'r1', 'q1', 't1', 5, 1, '{}', 0]);
    expect(reserveScript.args({ ...args, claims: { tier: 'gold' } })[7]).toBe('{"tier":"gold"}');
  });

  it('enter, release, refill, requeue, warmup, recover: every code to its kind', () => {
    decodesEveryCode(enterScript, EnterCode);
    expect(enterScript.decode([EnterCode.ENTERED, 7])).toEqual({ kind: 'entered', entrants: 7 });
    expect(enterScript.decode([EnterCode.CLOSED])).toEqual({ kind: 'closed' });
    decodesEveryCode(releaseScript, ReleaseCode);
    expect(releaseScript.decode([ReleaseCode.ALREADY, 1])).toEqual({ kind: 'already', restocked: 1 });
    decodesEveryCode(refillScript, RefillCode);
    expect(refillScript.decode([RefillCode.REFILLED, 9])).toEqual({ kind: 'refilled', stock: 9 });
    decodesEveryCode(requeueScript, RequeueCode);
    expect(requeueScript.decode([RequeueCode.HOLDS_OTHER])).toEqual({ kind: 'holds_other' });
    decodesEveryCode(warmupScript, WarmupCode);
    expect(warmupScript.decode([WarmupCode.ALREADY, 3, 1])).toEqual({ kind: 'already', stock: 3, holders: 1 });
    decodesEveryCode(recoverScript, RecoverCode);
    expect(recoverScript.decode([RecoverCode.RECOVERED, 0, 4])).toEqual({ kind: 'recovered', holders: 4 });
  });

  it('the borrow steps: take, confirm, abandon, give-back', () => {
    decodesEveryCode(takeScript, TakeCode);
    expect([TakeCode.TAKEN, TakeCode.ALREADY, TakeCode.SHORT].map((c) => takeScript.decode([c]))).toEqual([
      true,
      true,
      false,
    ]);
    decodesEveryCode(confirmScript, ConfirmCode);
    expect(confirmScript.decode([ConfirmCode.ABANDONED])).toBe(false);
    decodesEveryCode(abandonScript, AbandonCode);
    expect(abandonScript.decode([AbandonCode.TOO_FRESH])).toBe('too_fresh');
    decodesEveryCode(giveBackScript, GiveBackCode);
    expect(giveBackScript.decode([GiveBackCode.NOTHING])).toBe(false);
  });
});
