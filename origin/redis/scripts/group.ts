/**
 * lua/group-1.lua: the settlement consumer group of a bucket's Stream (XINFO GROUPS, routed with the
 * Stream's key), or null when the Stream or the group does not exist.
 */
import { CONSUMER_GROUP } from '../keys.js';
import { fieldsOf } from '../stream.js';
import type { Script } from './script.js';

export interface GroupInfo {
  pending: number;
  lag: number;
  lastDeliveredId: string;
}

export const groupScript: Script<void, GroupInfo | null> = {
  name: 'group',
  keys: (k) => [k.events],
  args: () => [],
  decode: (reply) => {
    for (const g of reply as unknown as unknown[][]) {
      const f = fieldsOf(g);
      if (f.name === CONSUMER_GROUP)
        return {
          pending: Number(f.pending ?? 0),
          lag: Number(f.lag ?? 0),
          lastDeliveredId: String(f['last-delivered-id'] ?? '0-0'),
        };
    }
    return null;
  },
};
