/** Reading Redis Stream replies: entry ids in order, and flat `[field, value, …]` lists. */

/** Negative, zero or positive as Stream id `a` comes before, is, or comes after `b` (`ms-seq`). */
export function compareStreamIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt);
  const [bm, bs] = b.split('-').map(BigInt);
  if (am! !== bm!) return am! < bm! ? -1 : 1;
  return as! === bs! ? 0 : as! < bs! ? -1 : 1;
}

/** `[field, value, field, value, …]` (an entry's fields, an XINFO row) as an object of strings. */
export function fieldsOf(flat: unknown[]): Record<string, string> {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) f[String(flat[i])] = String(flat[i + 1]);
  return f;
}
