/**
 * Identifier rules (docs/design.md §9): activity, SKU and user ids are decimal strings of positive 64-bit
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

/**
 * A reservation id names its activity, so a status lookup knows where to look: `<activityId>-<32 hex>`.
 * The 32 hex digits are the time in ms (12, as in UUIDv7) and 80 random bits: unguessable as
 * before (ownership is checked anyway), but ids issued later sort later, so the unique indexes
 * that hold them (orders, stock log) grow at one end instead of splitting pages all over
 * (docs/performance.md).
 */
export function newReservationId(activityId: string, now = Date.now()): string {
  // 80 random bits: 20 hex digits of a v4 UUID (randomUUID draws from a cached pool, cheaper
  // than getRandomValues per id), skipping its dashes, version digit and variant digit.
  const uuid = crypto.randomUUID();
  const random = uuid.slice(0, 8) + uuid.slice(9, 13) + uuid.slice(15, 18) + uuid.slice(20, 23) + uuid.slice(24, 26);
  return `${activityId}-${now.toString(16).padStart(12, '0').slice(-12)}${random}`;
}

export function isReservationId(value: unknown): value is string {
  return activityOfReservation(value) !== null;
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

/**
 * A lottery entry names its activity and its user: `<activityId>-entry-<userId>`. Deterministic, so
 * entering twice gives the same entry; it reveals nothing but the owner's own id to the owner.
 */
const ENTRY_ID = /^([1-9][0-9]{0,19})-entry-([1-9][0-9]{0,19})$/;

export function entryIdOf(activityId: string, userId: string): string {
  return `${activityId}-entry-${userId}`;
}

export function parseEntryId(entryId: unknown): { activityId: string; userId: string } | null {
  if (typeof entryId !== 'string') return null;
  const m = ENTRY_ID.exec(entryId);
  return m && isId(m[1]) && isId(m[2]) ? { activityId: m[1]!, userId: m[2]! } : null;
}
