/**
 * HMAC-SHA256 signing shared by edge and origin (Web Crypto only, so it runs in workerd and Node).
 * Verification goes through `crypto.subtle.verify`, which compares in constant time.
 *
 * Edge → origin (docs/design.md §9): `x-edge-timestamp: <ms>` and
 * `x-edge-signature: v1=<hex HMAC(secret, ts \n METHOD \n path-with-query \n hex SHA-256(body))>`.
 */
import { toHex } from './ids.js';

export const EDGE_TIMESTAMP_HEADER = 'x-edge-timestamp';
export const EDGE_SIGNATURE_HEADER = 'x-edge-signature';
/** Signed edge requests older (or further in the future) than this are refused. */
export const EDGE_SIGNATURE_MAX_AGE_MS = 5_000;

const encoder = new TextEncoder();
type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;
const keyCache = new Map<string, Promise<HmacKey>>();

/**
 * The HMAC-SHA256 key of `secret`, imported once per secret (a few secrets per deployment) instead
 * of on every signature: edge↔origin signatures, tickets, and user JWTs (edge/auth.ts).
 */
export function hmacKey(secret: string): Promise<HmacKey> {
  let key = keyCache.get(secret);
  if (!key) {
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
      'verify',
    ]);
    if (keyCache.size > 64) keyCache.clear();
    keyCache.set(secret, key);
  }
  return key;
}

function bytes(data: string | Uint8Array): Uint8Array<ArrayBuffer> {
  return (typeof data === 'string' ? encoder.encode(data) : new Uint8Array(data)) as Uint8Array<ArrayBuffer>;
}

async function sha256Hex(data: string | Uint8Array): Promise<string> {
  return toHex(await crypto.subtle.digest('SHA-256', bytes(data)));
}

export async function hmacHex(secret: string, message: string | Uint8Array): Promise<string> {
  return toHex(await crypto.subtle.sign('HMAC', await hmacKey(secret), bytes(message)));
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  // Lowercase only: one spelling per signature, so nothing can be replayed under another.
  if (hex.length % 2 !== 0 || !/^[0-9a-f]*$/.test(hex)) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Constant-time check that `signatureHex` is HMAC-SHA256(secret, message). */
export async function verifyHmacHex(
  secret: string,
  message: string | Uint8Array,
  signatureHex: string,
): Promise<boolean> {
  const sig = hexToBytes(signatureHex);
  if (!sig || sig.length !== 32) return false;
  return crypto.subtle.verify('HMAC', await hmacKey(secret), sig, bytes(message));
}

/** The signed string of §9; the one definition, also used by the origin's synchronous verifier. */
export function edgeCanonicalString(ts: string, method: string, pathWithQuery: string, bodySha256Hex: string): string {
  return `${ts}\n${method.toUpperCase()}\n${pathWithQuery}\n${bodySha256Hex}`;
}

/** Header syntax and freshness of a signed request; null when both are fine. */
export function checkEdgeHeaders(
  timestamp: string | null | undefined,
  signature: string | null | undefined,
  now: number,
  maxAgeMs = EDGE_SIGNATURE_MAX_AGE_MS,
): 'missing' | 'stale' | null {
  if (!timestamp || !signature || !/^\d{1,16}$/.test(timestamp) || !/^v1=[0-9a-f]{64}$/.test(signature))
    return 'missing';
  return Math.abs(now - Number(timestamp)) > maxAgeMs ? 'stale' : null;
}

async function edgeCanonical(
  ts: string,
  method: string,
  pathWithQuery: string,
  body: string | Uint8Array,
): Promise<string> {
  return edgeCanonicalString(ts, method, pathWithQuery, await sha256Hex(body));
}

/** Headers to attach to a request from edge to origin (or origin to edge). */
export async function signEdgeRequest(
  secret: string,
  req: { method: string; pathWithQuery: string; body?: string | Uint8Array; now?: number },
): Promise<Record<string, string>> {
  const ts = String(req.now ?? Date.now());
  const sig = await hmacHex(secret, await edgeCanonical(ts, req.method, req.pathWithQuery, req.body ?? ''));
  return { [EDGE_TIMESTAMP_HEADER]: ts, [EDGE_SIGNATURE_HEADER]: `v1=${sig}` };
}

export type EdgeSignatureFailure = 'missing' | 'stale' | 'bad_signature';

/** Checks a signed request; returns null when it is good, otherwise why it is not. */
export async function verifyEdgeRequest(
  secret: string,
  req: {
    method: string;
    pathWithQuery: string;
    body: string | Uint8Array;
    timestamp: string | null | undefined;
    signature: string | null | undefined;
    now?: number;
    maxAgeMs?: number;
  },
): Promise<EdgeSignatureFailure | null> {
  const { timestamp, signature } = req;
  const header = checkEdgeHeaders(timestamp, signature, req.now ?? Date.now(), req.maxAgeMs);
  if (header) return header;
  const canonical = await edgeCanonical(timestamp!, req.method, req.pathWithQuery, req.body);
  return (await verifyHmacHex(secret, canonical, signature!.slice(3))) ? null : 'bad_signature';
}
