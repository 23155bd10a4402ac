/** lua/primary-1.lua: the run id of the primary serving the bucket's slot (routed like reserve). */
import type { Script } from './script.js';

export const primaryScript: Script<void, string | null> = {
  name: 'primary',
  keys: (k) => [k.stock],
  args: () => [],
  decode: (reply) => (reply ? String(reply) : null),
};
