/**
 * lua/entry-page-1.lua: entries [start, start + count) of one bucket's closed lottery list as ONE
 * string, the "userId:quantity" lines joined by "\n" — the draw reads a million of them and hashes
 * most without keeping any, so not even a string per entry is made.
 */
import type { ActivityKeys } from '../keys.js';
import type { Script } from './script.js';

export interface EntryPageInput {
  start: number;
  count: number;
}

export const entryPageScript: Script<EntryPageInput, string> = {
  name: 'entry-page',
  keys: (k: ActivityKeys) => [k.entryList],
  args: ({ start, count }) => [start, start + count - 1],
  decode: (reply) => {
    const page: unknown = reply;
    if (typeof page !== 'string') throw new Error('entry-page script answered no string');
    return page;
  },
};
