/**
 * The origin's §9 verifier computes HMAC-SHA256 from two one-shot hashes over pads made once per
 * secret (origin/platform/http/edge-signature.ts): it must be HMAC-SHA256 exactly, for every key
 * and message length, and its reused buffers must not carry one call into the next.
 */
import { createHmac, createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { edgeCanonicalString } from '../../../contract/signing.js';
import { EdgeKey, verifyEdgeSignatureSync } from '../../../origin/platform/http/edge-signature.js';

const secrets = [
  '',
  'k',
  'bench-edge-origin-secret-0123456789',
  'x'.repeat(64),
  'y'.repeat(65),
  'z'.repeat(200),
  'clé-ünïcode-秘密',
];
const messages = [
  '',
  'a',
  'm'.repeat(55),
  'm'.repeat(64),
  'n'.repeat(200),
  'o'.repeat(600),
  'p'.repeat(5000),
  'ünïcode ✓ 秘密',
];

describe('EdgeKey', () => {
  it('computes HMAC-SHA256 as createHmac does, for keys and messages of every size', () => {
    for (const secret of secrets) {
      const key = new EdgeKey(secret);
      // Long and short messages in turn: the grown and reused buffers carry nothing over.
      for (const message of [...messages, ...[...messages].reverse()])
        expect(key.hmacHex(message)).toBe(createHmac('sha256', secret).update(message).digest('hex'));
    }
  });

  it('matches only the exact signature', () => {
    const key = new EdgeKey('bench-edge-origin-secret-0123456789');
    const good = createHmac('sha256', 'bench-edge-origin-secret-0123456789').update('hello').digest('hex');
    expect(key.matches('hello', good)).toBe(true);
    const flipped = (good[0] === '0' ? '1' : '0') + good.slice(1);
    expect(key.matches('hello', flipped)).toBe(false);
    expect(key.matches('hello!', good)).toBe(false);
    expect(key.matches('hello', good.slice(0, 62))).toBe(false);
    expect(key.matches('hello', `${good}00`)).toBe(false);
    // After a refusal, the same good signature still passes (no state left behind).
    expect(key.matches('hello', good)).toBe(true);
  });
});

describe('verifyEdgeSignatureSync', () => {
  const secret = 'bench-edge-origin-secret-0123456789';
  const now = 1_764_619_000_000;
  const body = '{"activityId":"1","userId":"42","quantity":1,"requestId":"r"}';
  const sign = (s: string, path = '/internal/reserve', b = body) => {
    const canonical = edgeCanonicalString(String(now), 'POST', path, createHash('sha256').update(b).digest('hex'));
    return `v1=${createHmac('sha256', s).update(canonical).digest('hex')}`;
  };
  const check = (signature: string, over: { body?: string; path?: string; key?: string | EdgeKey } = {}) =>
    verifyEdgeSignatureSync(over.key ?? new EdgeKey(secret), {
      method: 'POST',
      pathWithQuery: over.path ?? '/internal/reserve',
      body: over.body ?? body,
      timestamp: String(now),
      signature,
      now,
    });

  it('accepts the edge signature with a key object or the secret itself', () => {
    expect(check(sign(secret))).toBeNull();
    expect(check(sign(secret), { key: secret })).toBeNull();
  });

  it('refuses another secret, another path, another body, and a malformed header', () => {
    expect(check(sign('another-secret-0123456789012345'))).toBe('bad_signature');
    expect(check(sign(secret, '/internal/activities/1'))).toBe('bad_signature');
    expect(check(sign(secret), { body: `${body} ` })).toBe('bad_signature');
    expect(check(sign(secret).toUpperCase().replace('V1=', 'v1='))).toBe('missing');
  });
});
