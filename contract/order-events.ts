/**
 * Downstream order events (docs/design.md §10) as a receiver sees them: the body and the signature
 * `x-event-signature: v1=<hex HMAC-SHA256(ORDER_EVENTS_SECRET, ts + "\n" + body)>` with
 * `x-event-timestamp: <ms>`. Web Crypto only (contract/signing.ts), so a receiver written in
 * TypeScript — Node or a Worker — can verify with the same code that signs.
 */
import { verifyHmacHex } from './signing.js';

export const EVENT_TIMESTAMP_HEADER = 'x-event-timestamp';
export const EVENT_SIGNATURE_HEADER = 'x-event-signature';

export interface OrderEventBody {
  /** `<orderNo>:<type>`: the same on every delivery of this event; dedupe by it. */
  id: string;
  type: 'order.created' | 'order.paid' | 'order.timed_out';
  orderNo: string;
  activityId: string;
  userId: string;
  quantity: number;
  /** When the order change committed (ISO-8601, ms). */
  at: string;
}

/** The signed string: the one definition, also used by the origin's synchronous signer. */
export function orderEventSignedString(ts: string, body: string): string {
  return `${ts}\n${body}`;
}

/**
 * How old (or how far ahead of the receiver's clock) a delivery's timestamp may be by default: every
 * delivery, retries included, is signed when it is sent, so an older one is a replay.
 */
export const ORDER_EVENT_MAX_AGE_MS = 5 * 60_000;

/**
 * Constant-time check of a delivery's signature. A timestamp further than `maxAgeMs` from `now`
 * (default ORDER_EVENT_MAX_AGE_MS) is refused as a replay; a receiver whose clock is known to be off
 * may widen it.
 */
export async function verifyOrderEvent(
  secret: string,
  req: { body: string; timestamp: string | null | undefined; signature: string | null | undefined },
  opts: { now?: number; maxAgeMs?: number } = {},
): Promise<boolean> {
  const { timestamp, signature } = req;
  if (!timestamp || !signature || !/^\d{1,16}$/.test(timestamp) || !/^v1=[0-9a-f]{64}$/.test(signature)) return false;
  const maxAgeMs = opts.maxAgeMs ?? ORDER_EVENT_MAX_AGE_MS;
  if (!(Math.abs((opts.now ?? Date.now()) - Number(timestamp)) <= maxAgeMs)) return false;
  return verifyHmacHex(secret, orderEventSignedString(timestamp, req.body), signature.slice(3));
}
