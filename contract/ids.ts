/**
 * Identifier rules (DESIGN §9): activity, SKU and user ids are decimal strings of positive 64-bit
 * integers; request ids are client-chosen idempotency keys; trace ids are W3C trace ids.
 */
const MAX_U64 = 18446744073709551615n;
const DECIMAL_ID = /^[1-9][0-9]{0,19}$/;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const TRACE_ID = /^[0-9a-f]{32}$/;
const RESERVATION_ID = /^([1-9][0-9]{0,19})-([0-9a-f]{32})$/;

export function isId(value: unknown): value is string {
  return typeof value === 'string' && DECIMAL_ID.test(value) && BigInt(value) <= MAX_U64;
}

export function isRequestId(value: unknown): value is string {
  return typeof value === 'string' && REQUEST_ID.test(value);
}

export function isTraceId(value: unknown): value is string {
  return typeof value === 'string' && TRACE_ID.test(value) && !/^0+$/.test(value);
}

/** A reservation id names its activity, so a status lookup knows where to look: `<activityId>-<32 hex>`. */
export function newReservationId(activityId: string): string {
  return `${activityId}-${crypto.randomUUID().replaceAll('-', '')}`;
}

export function activityOfReservation(reservationId: unknown): string | null {
  if (typeof reservationId !== 'string') return null;
  const m = RESERVATION_ID.exec(reservationId);
  return m && isId(m[1]) ? m[1]! : null;
}

export function randomHex(bytes: number): string {
  const buf = new Uint8Array(bytes);
  crypto.getRandomValues(buf);
  return toHex(buf);
}

export function toHex(buf: ArrayBuffer | Uint8Array): string {
  const bytes = buf instanceof Uint8Array ? buf : new Uint8Array(buf);
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}
