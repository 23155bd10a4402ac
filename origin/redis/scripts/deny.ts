/** lua/deny-1.lua: deny-list rows into one bucket's `denied` hash, newer revisions only. */
import type { Script } from './script.js';

/** A deny-list row as the scripts get it: who, denied or allowed again, and the row's revision (≥ 1). */
export interface DenyRevision {
  userId: string;
  denied: boolean;
  revision: number;
}

export const denyScript: Script<DenyRevision[], void> = {
  name: 'deny',
  keys: (k) => [k.denied],
  // Pairs userId, signed revision (+ denied at it, − allowed again at it).
  args: (rows) => rows.flatMap((r) => [r.userId, r.denied ? r.revision : -r.revision]),
  decode: () => undefined,
};
