/**
 * What /metrics shows of each Redis server the origin uses (a standalone server, or every node of a
 * cluster, replicas included): connected clients against maxclients, and how many commands the
 * slow log has recorded since the server started.
 */
import { Cluster, Redis } from 'ioredis';
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

async function readOne(node: string, redis: Redis): Promise<RedisNodeStats> {
  const [info, slowlog] = await Promise.all([
    redis.info('clients'),
    redis.call('SLOWLOG', 'GET', '1') as Promise<[number, ...unknown[]][]>,
  ]);
  const newest = slowlog[0];
  return {
    node,
    connectedClients: infoField(info, 'connected_clients'),
    maxclients: infoField(info, 'maxclients'),
    slowlogEntries: newest ? Number(newest[0]) + 1 : 0,
  };
}

const addressOf = (r: Redis) => `${r.options.host}:${r.options.port}`;

/**
 * Reads every node in use. On a cluster the client talks to masters only, so the replicas named by
 * CLUSTER SLOTS get a connection of this reader's own (opened on first use, closed when a replica
 * leaves the cluster or on close()). A node that does not answer is left out of this reading.
 */
export class NodeStatsReader {
  private readonly replicas = new Map<string, Redis>();

  constructor(
    private readonly redis: RedisClient,
    private readonly commandTimeoutMs: number,
  ) {}

  async read(): Promise<RedisNodeStats[]> {
    const nodes = this.redis instanceof Cluster ? await this.clusterNodes(this.redis) : [this.redis];
    const read = await Promise.allSettled(nodes.map((r) => readOne(addressOf(r), r)));
    return read.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  }

  private async clusterNodes(cluster: Cluster): Promise<Redis[]> {
    const masters = cluster.nodes('master');
    const known = new Map(cluster.nodes('all').map((r) => [addressOf(r), r]));
    const slots = await masters[0]!.cluster('SLOTS');
    const listed = new Set(slots.flatMap(([, , ...holders]) => holders.map(([host, port]) => `${host}:${port}`)));
    for (const [address, conn] of this.replicas)
      if (!listed.has(address)) {
        conn.disconnect();
        this.replicas.delete(address);
      }
    return [...listed].map((address) => known.get(address) ?? this.replica(address));
  }

  private replica(address: string): Redis {
    let conn = this.replicas.get(address);
    if (!conn) {
      const [host, port] = address.split(':');
      conn = new Redis({
        host,
        port: Number(port),
        connectionName: 'origin-node-stats',
        commandTimeout: this.commandTimeoutMs,
        maxRetriesPerRequest: 0,
        retryStrategy: (times: number) => Math.min(50 * times, 1_000),
      });
      conn.on('error', () => undefined); // a replica down shows as a missing reading
      this.replicas.set(address, conn);
    }
    return conn;
  }

  close(): void {
    for (const conn of this.replicas.values()) conn.disconnect();
    this.replicas.clear();
  }
}
