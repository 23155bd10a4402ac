/**
 * Each script module's one decoder (origin/redis/scripts/): every return code of its Lua script
 * becomes its kind, an unknown code is an error, and the keys are laid out in the script's order.
 * The scripts' own codes against the real Redis: test/origin/redis/lua-scripts.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { activityKeys } from '../../../origin/redis/keys.js';
import { abandonScript } from '../../../origin/redis/scripts/abandon.js';
import { confirmScript } from '../../../origin/redis/scripts/confirm.js';
import { enterScript } from '../../../origin/redis/scripts/enter.js';
import { giveBackScript } from '../../../origin/redis/scripts/give-back.js';
import { readScripts } from '../../../origin/redis/scripts/load.js';
import { recoverScript } from '../../../origin/redis/scripts/recover.js';
import { refillScript, trancheScript } from '../../../origin/redis/scripts/refill.js';
import { releaseScript } from '../../../origin/redis/scripts/release.js';
import { requeueScript } from '../../../origin/redis/scripts/requeue.js';
import { reserveScript } from '../../../origin/redis/scripts/reserve.js';
import { takeScript } from '../../../origin/redis/scripts/take.js';
import { warmupScript } from '../../../origin/redis/scripts/warmup.js';
import type { Script } from '../../../origin/redis/scripts/script.js';
import { ReplyCode, type ReplyName } from '../../../origin/redis/scripts/reply-codes.js';

const k = activityKeys('a1', 's1');
const UNKNOWN = 99;

const lua = readScripts();

/** The reply codes a script's source returns, by their names in lua/includes/reply-codes.lua. */
const answered = (name: string) =>
  [...new Set([...lua.get(name)!.source.matchAll(/return \{? ?REPLY\.([A-Z_]+)/g)].map((m) => m[1]!))].sort();

/**
 * The module decodes exactly the codes its script returns: each of them decodes, every other code of
 * the one table and an unknown one throw naming the script.
 */
function decodesEveryCode(script: Script<never, unknown>, names: ReplyName[]) {
  expect(answered(script.name)).toEqual([...names].sort());
  for (const [name, code] of Object.entries(ReplyCode)) {
    const decode = () => script.decode([code, 'x', 3]);
    if (names.includes(name as ReplyName)) expect(decode).not.toThrow();
    else expect(decode).toThrow(`${script.name} script returned unknown code ${code}`);
  }
  expect(() => script.decode([UNKNOWN])).toThrow(`${script.name} script returned unknown code ${UNKNOWN}`);
}

describe('script modules', () => {
  it('each module lays out as many KEYS as its lua/<name>-<keys>.lua file declares', () => {
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
    decodesEveryCode(reserveScript, [
      'DONE',
      'ALREADY',
      'BORROW',
      'PENDING',
      'NOT_WARMED',
      'PAUSED',
      'ENDED',
      'SOLD_OUT',
      'LIMIT_EXCEEDED',
      'INSUFFICIENT_STOCK',
      'DENIED',
      'NOT_ELIGIBLE',
    ]);
    expect(reserveScript.decode([ReplyCode.DONE, 'r1', 4])).toEqual({
      kind: 'reserved',
      reservationId: 'r1',
      remaining: 4,
    });
    expect(reserveScript.decode([ReplyCode.ALREADY, 'r1'])).toEqual({ kind: 'repeat', reservationId: 'r1' });
    expect(reserveScript.decode([ReplyCode.BORROW, 'r2', 0])).toEqual({
      kind: 'borrow',
      reservationId: 'r2',
      homeStock: 0,
    });
    expect(reserveScript.decode([ReplyCode.PAUSED])).toEqual({ kind: 'paused' });
    expect(reserveScript.decode([ReplyCode.NOT_WARMED])).toEqual({ kind: 'not_warmed' });
    expect(reserveScript.decode([ReplyCode.NOT_ELIGIBLE])).toEqual({ kind: 'not_eligible' });
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
    decodesEveryCode(enterScript, [
      'DONE',
      'ALREADY',
      'NOT_WARMED',
      'PAUSED',
      'ENDED',
      'LIMIT_EXCEEDED',
      'CLOSED',
      'DENIED',
      'NOT_ELIGIBLE',
    ]);
    expect(enterScript.decode([ReplyCode.DONE, 7])).toEqual({ kind: 'entered', entrants: 7 });
    expect(enterScript.decode([ReplyCode.CLOSED])).toEqual({ kind: 'closed' });
    decodesEveryCode(releaseScript, ['DONE', 'ALREADY', 'NOT_WARMED']);
    expect(releaseScript.decode([ReplyCode.ALREADY, 1])).toEqual({ kind: 'already', restocked: 1 });
    decodesEveryCode(refillScript, ['DONE', 'ALREADY', 'NOT_WARMED']);
    expect(refillScript.decode([ReplyCode.DONE, 9])).toEqual({ kind: 'refilled', stock: 9 });
    decodesEveryCode(requeueScript, [
      'DONE',
      'ALREADY',
      'NOT_WARMED',
      'NOT_RELEASED',
      'HOLDS_OTHER',
      'SOLD_OUT',
      'DENIED',
    ]);
    expect(requeueScript.decode([ReplyCode.HOLDS_OTHER])).toEqual({ kind: 'holds_other' });
    decodesEveryCode(warmupScript, ['DONE', 'ALREADY', 'HAS_HISTORY']);
    expect(warmupScript.decode([ReplyCode.ALREADY, 3, 1])).toEqual({ kind: 'already', stock: 3, holders: 1 });
    decodesEveryCode(recoverScript, ['DONE', 'WARM', 'NO_STREAM']);
    expect(recoverScript.decode([ReplyCode.DONE, 0, 4])).toEqual({ kind: 'recovered', holders: 4 });
  });

  it('the borrow steps: take, confirm, abandon, give-back', () => {
    decodesEveryCode(takeScript, ['DONE', 'ALREADY', 'NOT_WARMED', 'NOT_OPEN', 'SHORT']);
    expect([ReplyCode.DONE, ReplyCode.ALREADY, ReplyCode.SHORT].map((c) => takeScript.decode([c]))).toEqual([
      true,
      true,
      false,
    ]);
    decodesEveryCode(confirmScript, ['DONE', 'ALREADY', 'ABANDONED']);
    expect(confirmScript.decode([ReplyCode.ABANDONED])).toBe(false);
    decodesEveryCode(abandonScript, ['DONE', 'ALREADY', 'CONFIRMED', 'TOO_FRESH', 'UNKNOWN']);
    expect(abandonScript.decode([ReplyCode.TOO_FRESH])).toBe('too_fresh');
    decodesEveryCode(giveBackScript, ['DONE', 'NOTHING_LENT', 'NOT_WARMED']);
    expect(giveBackScript.decode([ReplyCode.NOTHING_LENT])).toBe(false);
  });
});
