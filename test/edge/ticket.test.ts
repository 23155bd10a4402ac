import { describe, expect, it } from 'vitest';
import { ContractError } from '../../contract/index.js';
import { checkTicket, issueTicket, parseTicketKeys, verifyTicket } from '../../edge/ticket.js';
import { TEST_TICKET_KEY_NEW, TEST_TICKET_KEY_OLD } from '../helpers/edge-test-secrets.js';

const keys = [TEST_TICKET_KEY_NEW, TEST_TICKET_KEY_OLD];
const now = Date.now();
const expect403 = async (p: Promise<unknown>, message: RegExp) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ContractError);
  expect((err as ContractError).code).toBe('bad_ticket');
  expect((err as ContractError).status).toBe(403);
  expect((err as ContractError).message).toMatch(message);
};

describe('purchase tickets', () => {
  it('a genuine ticket verifies for its activity and user', async () => {
    const t = await issueTicket(keys, { activityId: '10', userId: '42', expiresAt: now + 60_000 });
    expect(t).toMatch(/^v1\.10\.42\.\d+\.k2\.[0-9a-f]{16}\.[0-9a-f]{64}$/);
    await expect(verifyTicket(keys, t, { activityId: '10', userId: '42', now })).resolves.toBeUndefined();
  });

  it('a ticket signed with the rotated-out second key still verifies', async () => {
    const t = await issueTicket([TEST_TICKET_KEY_OLD], { activityId: '10', userId: '42', expiresAt: now + 60_000 });
    expect(t).toContain('.k1.');
    await expect(verifyTicket(keys, t, { activityId: '10', userId: '42', now })).resolves.toBeUndefined();
  });

  it('a forged signature, altered payload, unknown key or garbage is refused', async () => {
    const t = await issueTicket(keys, { activityId: '10', userId: '42', expiresAt: now + 60_000 });
    const forged = t.slice(0, -64) + '0'.repeat(64);
    await expect403(verifyTicket(keys, forged, { activityId: '10', userId: '42', now }), /signature/);
    const altered = t.replace('.42.', '.43.');
    await expect403(verifyTicket(keys, altered, { activityId: '10', userId: '43', now }), /signature/);
    const otherKey = await issueTicket([{ kid: 'k9', secret: 'another-secret-00000000000' }], {
      activityId: '10',
      userId: '42',
      expiresAt: now + 60_000,
    });
    await expect403(verifyTicket(keys, otherKey, { activityId: '10', userId: '42', now }), /signature/);
    for (const junk of [undefined, '', 'abc', 'v1.10.42', `${t}.x`, 'x'.repeat(300)]) {
      await expect403(verifyTicket(keys, junk, { activityId: '10', userId: '42', now }), /malformed/);
    }
  });

  it('a replayed forged ticket is refused from memory, without an HMAC, with the same answer; only for that key set', async () => {
    const t = await issueTicket(keys, { activityId: '10', userId: '42', expiresAt: now + 60_000 });
    const forged = t.slice(0, -64) + 'e'.repeat(64);
    const subtle = crypto.subtle;
    const verify = subtle.verify;
    let hmacs = 0;
    subtle.verify = function (this: SubtleCrypto, ...args: Parameters<SubtleCrypto['verify']>) {
      hmacs++;
      return verify.apply(this, args);
    } as SubtleCrypto['verify'];
    try {
      await expect403(
        verifyTicket(keys, forged, { activityId: '10', userId: '42', now }),
        /^ticket signature is not valid$/,
      );
      expect(hmacs).toBe(1);
      await expect403(
        verifyTicket(keys, forged, { activityId: '10', userId: '42', now }),
        /^ticket signature is not valid$/,
      );
      await expect403(verifyTicket(keys, forged, { activityId: '10', userId: '42', now: now + 30_000 }), /signature/);
      expect(hmacs).toBe(1);
      // A genuine ticket is never remembered: verified each time.
      await verifyTicket(keys, t, { activityId: '10', userId: '42', now });
      await verifyTicket(keys, t, { activityId: '10', userId: '42', now });
      expect(hmacs).toBe(3);
    } finally {
      subtle.verify = verify;
    }
    // Refused under one key set, a ticket is checked afresh under another: here a key that signed it.
    const k9 = { kid: 'k9', secret: 'another-secret-00000000000' };
    const byK9 = await issueTicket([k9], { activityId: '10', userId: '42', expiresAt: now + 60_000 });
    await expect403(verifyTicket(keys, byK9, { activityId: '10', userId: '42', now }), /signature/);
    await expect(verifyTicket([k9], byK9, { activityId: '10', userId: '42', now })).resolves.toBeUndefined();
  });

  it('checkTicket refuses a malformed or replayed forged ticket synchronously, and checks a new one by its promise', async () => {
    const t = await issueTicket(keys, { activityId: '10', userId: '42', expiresAt: now + 60_000 });
    const forged = t.slice(0, -64) + 'd'.repeat(64);
    const want = { activityId: '10', userId: '42', now };
    const refusedAtOnce = (check: () => unknown, message: RegExp) => {
      let err: unknown = null;
      try {
        check();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ContractError);
      expect((err as ContractError).code).toBe('bad_ticket');
      expect((err as ContractError).message).toMatch(message);
    };
    refusedAtOnce(() => checkTicket(keys, 'v1.10.42', want), /^missing or malformed ticket$/);
    // First sight: the HMAC decides, through the promise, with verifyTicket's answer.
    await expect403(checkTicket(keys, forged, want), /^ticket signature is not valid$/);
    // A replay: refused before any promise, with the same code and message.
    refusedAtOnce(() => checkTicket(keys, forged, want), /^ticket signature is not valid$/);
    await expect403(verifyTicket(keys, forged, want), /^ticket signature is not valid$/);
    // A genuine ticket is never answered from memory: its promise resolves after the HMAC.
    await expect(checkTicket(keys, t, want)).resolves.toBeUndefined();
  });

  it('an expired ticket is refused', async () => {
    const t = await issueTicket(keys, { activityId: '10', userId: '42', expiresAt: now - 1 });
    await expect403(verifyTicket(keys, t, { activityId: '10', userId: '42', now }), /expired/);
  });

  it("another activity's or another user's ticket is refused", async () => {
    const t = await issueTicket(keys, { activityId: '10', userId: '42', expiresAt: now + 60_000 });
    await expect403(verifyTicket(keys, t, { activityId: '11', userId: '42', now }), /another activity/);
    await expect403(verifyTicket(keys, t, { activityId: '10', userId: '43', now }), /another user/);
  });

  it('TICKET_KEYS must name at least one key with a long enough secret', () => {
    expect(parseTicketKeys('a:0123456789abcdef, b:0123456789abcdefg')).toEqual([
      { kid: 'a', secret: '0123456789abcdef' },
      { kid: 'b', secret: '0123456789abcdefg' },
    ]);
    expect(() => parseTicketKeys('')).toThrow();
    expect(() => parseTicketKeys('a:short')).toThrow();
    expect(() => parseTicketKeys('nocolon')).toThrow();
  });
});
