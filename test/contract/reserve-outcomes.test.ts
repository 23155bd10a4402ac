/**
 * The contract's one table of reserve outcomes: each outcome's HTTP status and contract code as the
 * wire has them (docs/design.md §3, §10), the codes the edge passes on from the origin, and which of
 * them end a waiting-room turn.
 */
import { describe, expect, it } from 'vitest';
import { FINAL_ORIGIN_ANSWERS, ORIGIN_ANSWER_CODES, RESERVE_OUTCOMES } from '../../contract/reserve-outcomes.js';

describe('RESERVE_OUTCOMES', () => {
  it('maps each outcome to its status and, for a refusal, its code', () => {
    const answers = Object.fromEntries(
      Object.entries(RESERVE_OUTCOMES).map(([kind, o]) => [
        kind,
        'refusal' in o ? [o.status, o.refusal.code] : [o.status],
      ]),
    );
    expect(answers).toEqual({
      reserved: [202],
      repeat: [200],
      sold_out: [409, 'sold_out'],
      insufficient_stock: [409, 'insufficient_stock'],
      limit_exceeded: [409, 'limit_exceeded'],
      paused: [503, 'paused'],
      ended: [410, 'ended'],
      not_warmed: [503, 'not_ready'],
      denied: [403, 'denied'],
      not_eligible: [403, 'not_eligible'],
      busy: [503, 'busy'],
      unconfirmed: [503, 'unavailable'],
    });
  });

  it('the edge passes on exactly the codes the origin answers with', () => {
    expect([...ORIGIN_ANSWER_CODES].sort()).toEqual(
      [
        'bad_request',
        'busy',
        'denied',
        'ended',
        'forbidden',
        'insufficient_stock',
        'limit_exceeded',
        'not_eligible',
        'not_found',
        'not_ready',
        'paused',
        'shadow_mismatch',
        'sold_out',
        'too_early',
        'unavailable',
      ].sort(),
    );
  });

  it('a kept waiting-room turn ends on a "no", and stays for the next poll on a "not now"', () => {
    expect([...FINAL_ORIGIN_ANSWERS].sort()).toEqual(
      [
        'bad_request',
        'denied',
        'ended',
        'insufficient_stock',
        'limit_exceeded',
        'not_eligible',
        'paused',
        'shadow_mismatch',
        'sold_out',
        'too_early',
      ].sort(),
    );
    for (const code of FINAL_ORIGIN_ANSWERS) expect(ORIGIN_ANSWER_CODES.has(code)).toBe(true);
  });
});
