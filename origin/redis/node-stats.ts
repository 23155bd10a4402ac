/**
 * What /metrics shows of each Redis server the origin uses (a standalone server, or every node of a
 * cluster, replicas included): connected clients against maxclients, and how many commands the
 * slow log has recorded since the server started.
 */
import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './client.js';

export interface RedisNodeStats {
  /** host:port as the origin reaches it. */
  node: string;
  connectedClients: number;
  maxclients: number;
  /**
   * Slow-log entries recorded since the server started: the newest entry's id + 1. Ids only grow
   * (SLOWLOG RESET keeps counting), so this counts entries that were trimmed or reset away too.
   */
  slowlogEntries: number;
}

function infoField(info: string, name: string): number {
  const m = new RegExp(`^${name}:(\\d+)`, 'm').exec(info);
  return m ? Number(m[1]) : NaN;
}

async function readOne(redis: Redis): Promise<RedisNodeStats> {
  const [info, slowlog] = await Promise.all([
    redis.info('clients'),
    redis.call('SLOWLOG', 'GET', '1') as Promise<[number, ...unknown[]][]>,
  ]);
  const newest = slowlog[0];
  return {
    node: `${redis.options.host}:${redis.options.port}`,
    connectedClients: infoField(info, 'connected_clients'),
    maxclients: infoField(info, 'maxclients'),
    slowlogEntries: newest ? Number(newest[0]) + 1 : 0,
  };
}

/** One INFO clients and one SLOWLOG GET 1 per node, all nodes at once. */
export async function readNodeStats(redis: RedisClient): Promise<RedisNodeStats[]> {
  const nodes = redis instanceof Cluster ? redis.nodes('all') : [redis];
  return Promise.all(nodes.map(readOne));
}
