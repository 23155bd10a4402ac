/**
 * What the failover watch and the replica rule ask of Redis: who serves each bucket's slot now
 * (lua/primary-1.lua) and how its replicas stand (lua/replication-1.lua), the primaries a failover
 * recovery proved, the operator's acceptance of a layout one failover would stall, warm-up's replica
 * pause, and the nodes' client and slow-log figures. The watch asks on a fail-fast connection of its
 * own, outside the breaker: it must see Redis itself.
 */
import { Cluster } from 'ioredis';
import { redisReady } from './client.js';
import type { RedisConnection } from './connection.js';
import { NodeStatsReader, type RedisNodeStats } from './node-stats.js';
import type { Sale } from './sale.js';
import { primaryScript } from './scripts/primary.js';
import { replicationScript } from './scripts/replication.js';
import type { ScriptRunner } from './scripts/runner.js';

/** A bucket's primary and its replicas as INFO replication lists them. */
export interface PrimaryReplication {
  runId: string;
  /** `host:port` of the primary. */
  node: string;
  replicas: { state: string; lag: number }[];
}

/** `slaveN:ip=…,port=…,state=online,offset=…,lag=…` lines of INFO replication. */
export function replicasOf(info: string): PrimaryReplication['replicas'] {
  const out: PrimaryReplication['replicas'] = [];
  for (const line of info.split(/\r?\n/)) {
    if (!/^slave\d+:/.test(line)) continue;
    const fields = Object.fromEntries(
      line
        .slice(line.indexOf(':') + 1)
        .split(',')
        .map((kv) => kv.split('=') as [string, string]),
    );
    out.push({ state: fields.state ?? '', lag: Number(fields.lag ?? Infinity) });
  }
  return out;
}

/** Config-hash field: the primary (per bucket) whose state a failover recovery proved. */
const PROVEN_FIELD = 'provenPrimary';
/** Config-hash field (bucket 0): who let the sale open although one failover would stall a bucket. */
const REPLICA_RISK_FIELD = 'replicaRiskAcceptedBy';
/** Config-hash field (bucket 0): set when warm-up paused the sale for the replica rule (not an operator's pause). */
const REPLICA_PAUSE_FIELD = 'replicaPaused';

export class ReplicationWatch {
  /**
   * The watch's own connection (primaries, replication), opened on first use. Not the request
   * connection: a `WAIT` blocks its connection for up to REDIS_WAIT_TIMEOUT_MS, so on a primary
   * with too few replicas every reservation's WAIT queues ahead of the watch's question until it
   * times out — the watch then read "cannot tell" for the very bucket that failed over.
   */
  private watch: ScriptRunner | null = null;
  /**
   * Settles once the watch's connection is first up (or could not come up in time). Its questions
   * wait for it: the connection fails fast while offline, so the first round after start-up would
   * otherwise read "cannot tell" for every sale — a false alarm in the log, not a Redis problem.
   */
  private watchOpened: Promise<void> = Promise.resolve();
  private nodeStatsReader: NodeStatsReader | null = null;

  constructor(private readonly redis: RedisConnection) {}

  private get ops() {
    return this.redis.ops.redis;
  }

  private watchScripts(): ScriptRunner {
    if (!this.watch) {
      this.watch = this.redis.openRunner('origin-failover-watch', {
        commandTimeoutMs: this.redis.opts.requestTimeoutMs,
        queueWhileOffline: false,
        logAs: 'redis watch error',
      });
      this.watchOpened = redisReady(this.watch.redis, this.redis.opts.requestTimeoutMs).catch(() => undefined);
    }
    return this.watch;
  }

  /**
   * A watch question answers within REDIS_COMMAND_TIMEOUT_MS or counts as unanswered: the command
   * timeout starts only once a command is written to a node, and a cluster client may hold one
   * before that (a slot refresh, redirections) — the watch's round must never wait on it.
   */
  private watchAnswer<T>(ask: (watch: ScriptRunner) => Promise<T>): Promise<T> {
    const watch = this.watchScripts();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('no answer in time')), this.redis.opts.requestTimeoutMs);
    });
    const question = this.watchOpened.then(() => ask(watch));
    return Promise.race([question, deadline]).finally(() => clearTimeout(timer));
  }

  /**
   * Per sale and bucket, the identity of the Redis primary serving its slot now: the `run_id` of the
   * server that runs a script on the bucket's key (lua/primary-1.lua), routed exactly like the
   * reserve script. A restart or a promoted replica changes it. null = cannot tell right now (the
   * primary unreachable, the cluster still electing). Asked on the watch's own fail-fast connection.
   */
  async primaries(sales: Sale[]): Promise<Map<string, (string | null)[]>> {
    const result = new Map<string, (string | null)[]>();
    const ask = (sale: Sale, b: number) =>
      this.watchAnswer((watch) => watch.run(primaryScript, this.redis.keys(sale, b), undefined)).catch(() => null);
    if (!(this.redis.request.redis instanceof Cluster)) {
      // One server serves every key: one question for all sales.
      const id = sales.length ? await ask(sales[0]!, 0) : null;
      for (const sale of sales) result.set(sale.activityId, Array<string | null>(sale.buckets).fill(id));
      return result;
    }
    await Promise.all(
      sales.map(async (sale) => {
        const ids = await Promise.all(Array.from({ length: sale.buckets }, (_, b) => ask(sale, b)));
        result.set(sale.activityId, ids);
      }),
    );
    return result;
  }

  /**
   * Per bucket, the primary serving its slot now as lua/replication-1.lua reports it (routed like the
   * reserve script): its run id, `host:port` (the host as the client knows that port), and each
   * replica's `state` and `lag` from INFO replication. null = the primary cannot be asked right now.
   * Asked on the watch's own fail-fast connection, outside the breaker (the watch must see Redis itself).
   */
  async replication(sale: Sale): Promise<(PrimaryReplication | null)[]> {
    return Promise.all(
      this.redis.allKeys(sale).map((k) =>
        this.watchAnswer((watch) => watch.run(replicationScript, k, undefined))
          .then(({ runId, port, info }) => ({
            runId,
            node: `${this.hostOfPort(port)}:${port}`,
            replicas: replicasOf(info),
          }))
          .catch(() => null),
      ),
    );
  }

  /** The host the client reaches a node on, by its port (on one machine every node has its own port). */
  private hostOfPort(port: number): string {
    const client = this.redis.request.redis;
    const nodes = client instanceof Cluster ? client.nodes('master') : [client];
    const match = nodes.find((n) => Number(n.options.port) === port);
    return String(match?.options.host ?? nodes[0]?.options.host ?? '127.0.0.1');
  }

  /** The primaries a finished failover recovery proved the sale on (per bucket; null where none). */
  async provenPrimaries(sale: Sale): Promise<(string | null)[]> {
    // On the watch's connection: the request connection may be queued behind WAITs (watchScripts).
    return Promise.all(
      this.redis.allKeys(sale).map((k) => this.watchAnswer((watch) => watch.redis.hget(k.config, PROVEN_FIELD))),
    );
  }

  async markProven(sale: Sale, primaries: string[]): Promise<void> {
    await Promise.all(this.redis.allKeys(sale).map((k, b) => this.ops.hset(k.config, PROVEN_FIELD, primaries[b]!)));
  }

  /** The operator who let this sale open on a layout one failover would stall (REPLICA_RISK_FIELD), or null. */
  async replicaRiskAcceptedBy(sale: Sale): Promise<string | null> {
    return this.ops.hget(this.redis.keys(sale, 0).config, REPLICA_RISK_FIELD);
  }

  async acceptReplicaRisk(sale: Sale, actor: string): Promise<void> {
    await this.ops.hset(this.redis.keys(sale, 0).config, REPLICA_RISK_FIELD, actor);
  }

  /** Warm-up paused the sale for the replica rule (REPLICA_PAUSE_FIELD): an override may reopen it. */
  async markReplicaPause(sale: Sale): Promise<void> {
    await this.ops.hset(this.redis.keys(sale, 0).config, REPLICA_PAUSE_FIELD, Date.now());
  }

  /** True (and the mark cleared) when warm-up had paused the sale for the replica rule. */
  async takeReplicaPause(sale: Sale): Promise<boolean> {
    return (await this.ops.hdel(this.redis.keys(sale, 0).config, REPLICA_PAUSE_FIELD)) === 1;
  }

  /** Clients and slow-log growth of every node in use, on the ops connection (never the request path's). */
  nodeStats(): Promise<RedisNodeStats[]> {
    if (!this.nodeStatsReader) {
      const reader = new NodeStatsReader(this.ops, this.redis.opts.opsTimeoutMs);
      this.redis.track(reader);
      this.nodeStatsReader = reader;
    }
    return this.nodeStatsReader.read();
  }
}
