import { describe, expect, it } from 'vitest';
import { ContractError } from '../../contract/index.js';

describe('ContractError', () => {
  it('records where it was thrown by default (origin, tools); only the edge turns that off', () => {
    expect(ContractError.recordStack).toBe(true);
    const err = new ContractError('sold_out', 'sold out', { retryAfter: 2 });
    expect(err.stack).toMatch(/^ContractError: sold out\n\s+at /);
    expect([err.code, err.status, err.retryAfter]).toEqual(['sold_out', 409, 2]);
  });
});
