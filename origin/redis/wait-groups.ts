/**
 * REDIS_WAIT_REPLICAS without one replica round trip per reservation. `WAIT` blocks its connection
 * until the replicas acknowledge every write made on it so far, so a `WAIT` behind each reservation
 * (all on the one request connection) made each reservation wait for the acknowledgement of the one
 * before: at most one reservation per replica round trip, whatever the load. Here the reservations
 * asked for while one group is out go together in the next pipeline — the scripts one after the
 * other, one `WAIT` behind them — so one round trip confirms them all. The `WAIT` still covers every
 * write of its group (it counts replicas that hold everything written on the connection before it),
 * so each reservation is promised exactly as before: only once that many replicas hold it.
 *
 * One group goes out at a time per server (per bucket slot on a Redis Cluster, so a pipeline stays on
 * the node that owns its keys); the first reservation after a quiet moment goes out on the next turn
 * of the event loop, with whatever else arrived in that turn. A group holds at most
 * WAIT_GROUP_MAX_RESERVATIONS; the rest wait for the next one.
 */
import { Cluster } from 'ioredis';
import type { RedisClient } from './client.js';
import type { ActivityKeys } from './keys.js';
import type { ScriptRunner } from './scripts/runner.js';
import { reserveScript, type ReserveArgs, type ReserveReply } from './scripts/reserve.js';

/** The most reservations one pipeline carries before its `WAIT` (bounds one write and one reply). */
export const WAIT_GROUP_MAX_RESERVATIONS = 500;

export interface WaitedReply {
  decoded: ReserveReply;
  /** Replicas that acknowledged the write (the `WAIT` reply of its group). */
  replicas: number;
}

interface Waiting {
  k: ActivityKeys;
  args: ReserveArgs;
  resolve: (reply: WaitedReply) => void;
  reject: (err: unknown) => void;
}

interface Group {
  queued: Waiting[];
  /** A pipeline of this group is out, or its send is scheduled. */
  busy: boolean;
}

export interface WaitGroupOptions {
  scripts: ScriptRunner;
  wait: { replicas: number; timeoutMs: number };
  /**
   * A reservation whose script failed in a way one more try can mend (NOSCRIPT on a server that lost
   * its script cache, a redirect after a failover): sent again on its own, script loaded first.
   */
  retryAlone: (k: ActivityKeys, args: ReserveArgs, err: Error) => Promise<WaitedReply>;
}

export class WaitGroups {
  private readonly groups = new Map<string, Group>();

  constructor(private readonly opts: WaitGroupOptions) {}

  private get client(): RedisClient {
    return this.opts.scripts.redis;
  }

  /** Reserves with the bucket's next group and resolves once that group's `WAIT` has answered. */
  reserve(k: ActivityKeys, args: ReserveArgs): Promise<WaitedReply> {
    // One server holds every bucket unless this is a cluster: then a group is one bucket's slot.
    const key = this.client instanceof Cluster ? k.config : '';
    let group = this.groups.get(key);
    if (!group) {
      group = { queued: [], busy: false };
      this.groups.set(key, group);
    }
    const g = group;
    return new Promise<WaitedReply>((resolve, reject) => {
      g.queued.push({ k, args, resolve, reject });
      if (!g.busy) {
        g.busy = true;
        setImmediate(() => this.send(key, g));
      }
    });
  }

  private send(key: string, group: Group): void {
    const batch = group.queued.splice(0, WAIT_GROUP_MAX_RESERVATIONS);
    // Fire and forget: sendBatch never rejects (every error goes to the batch's callers).
    void this.sendBatch(batch).finally(() => {
      if (group.queued.length > 0) this.send(key, group);
      else {
        group.busy = false;
        this.groups.delete(key);
      }
    });
  }

  /** One pipeline: every reservation's script, then one `WAIT`. Never rejects: each caller gets its own outcome. */
  private async sendBatch(batch: Waiting[]): Promise<void> {
    const { scripts, wait } = this.opts;
    const pipeline = this.client.pipeline();
    for (const w of batch) scripts.queue(pipeline, reserveScript, w.k, w.args);
    pipeline.call('WAIT', wait.replicas, wait.timeoutMs);
    let results: [Error | null, unknown][];
    try {
      results = (await pipeline.exec()) ?? [];
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    const [waitErr, waitReply] = results[batch.length] ?? [new Error('no WAIT reply'), null];
    const replicas = Number(waitReply);
    batch.forEach((w, i) => {
      const [err, reply] = results[i] ?? [new Error('no script reply'), null];
      if (err) {
        if (mendable(err)) this.opts.retryAlone(w.k, w.args, err).then(w.resolve, w.reject);
        else w.reject(err);
      } else if (waitErr) w.reject(waitErr);
      else {
        try {
          w.resolve({ decoded: reserveScript.decode(reply as (string | number)[]), replicas });
        } catch (decodeErr) {
          w.reject(decodeErr);
        }
      }
    });
  }
}

/** Errors one more try on its own can mend: the script cache lost, the slot moved. */
const mendable = (err: Error): boolean =>
  err.message.includes('NOSCRIPT') || /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/.test(err.message);
