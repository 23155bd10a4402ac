/** lua/replication-1.lua: the primary serving the bucket's slot, its port and its INFO replication. */
import type { Script } from './script.js';

export interface ReplicationReply {
  runId: string;
  port: number;
  /** INFO replication as the primary printed it. */
  info: string;
}

export const replicationScript: Script<void, ReplicationReply> = {
  name: 'replication',
  keys: (k) => [k.stock],
  args: () => [],
  decode(reply) {
    const [runId, port, info] = reply.map(String);
    return { runId: runId!, port: Number(port), info: info! };
  },
};
