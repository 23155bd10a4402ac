/** Reading Redis Stream replies: entry ids in order, and flat `[field, value, …]` lists. */

/** Negative, zero or positive as Stream id `a` comes before, is, or comes after `b` (`ms-seq`). */
export function compareStreamIds(a: string, b: string): number {
  const ad = a.indexOf('-');
  const bd = b.indexOf('-');
  return compareDecimal(a.slice(0, ad), b.slice(0, bd)) || compareDecimal(a.slice(ad + 1), b.slice(bd + 1));
}

/**
 * Unsigned decimal strings without leading zeros (as Redis writes both parts of an id) by value:
 * the longer is larger, else the first differing digit decides. No BigInt per comparison: the
 * reconciliation snapshot compares every entry of a sale's Stream.
 */
function compareDecimal(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}

/** `[field, value, field, value, …]` (an entry's fields, an XINFO row) as an object of strings. */
export function fieldsOf(flat: unknown[]): Record<string, string> {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) f[String(flat[i])] = String(flat[i + 1]);
  return f;
}
