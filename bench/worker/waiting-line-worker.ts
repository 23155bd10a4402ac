/**
 * The Worker bench/waiting-line.ts runs in workerd: the real AdmissionDO three ways — its line kept in
 * SQLite storage with joins written before their answer (SYNC, the default), with joins in the next
 * batch (BATCHED), and in memory only, as the line was first kept (MEMORY) — and one route that makes a batch
 * of `enter` or `poll` calls to one shard, so the HTTP cost is shared by many calls.
 *
 *   POST /<SYNC|BATCHED|MEMORY>/<join|poll>?shard=<name>   body: a JSON array of calls
 */
import { AdmissionDO } from '../../edge/durable/admission.js';
import type { LineLimits } from '../../edge/durable/line-entries.js';
import type { LineStore } from '../../edge/durable/line-store.js';

export { AdmissionDO };

/** The line in memory only: the baseline. */
export class MemoryAdmissionDO extends AdmissionDO {
  protected override openStore(): LineStore | null {
    return null;
  }
}

/** Joins written with the next batch, not before their answer. */
export class BatchedAdmissionDO extends AdmissionDO {
  protected override joinWrite(): 'sync' | 'batched' {
    return 'batched';
  }
}

interface BenchEnv {
  SYNC: DurableObjectNamespace<AdmissionDO>;
  BATCHED: DurableObjectNamespace<AdmissionDO>;
  MEMORY: DurableObjectNamespace<AdmissionDO>;
}

export type JoinCall = { userId: string; requestId: string; limits: LineLimits };
export type PollCall = { epoch: string; seq: number; userId: string; limits: LineLimits };

export default {
  async fetch(request: Request, env: BenchEnv): Promise<Response> {
    const [, variant, op] = new URL(request.url).pathname.split('/');
    const shard = new URL(request.url).searchParams.get('shard') ?? 'bench';
    const ns = env[variant as keyof BenchEnv];
    if (!ns || (op !== 'join' && op !== 'poll')) return new Response('no such route', { status: 404 });
    const stub = ns.get(ns.idFromName(shard));
    if (op === 'join') {
      const calls = (await request.json()) as JoinCall[];
      const answers = await Promise.all(
        calls.map((c) => stub.enter({ userId: c.userId, requestId: c.requestId, quantity: 1 }, 1, c.limits)),
      );
      return Response.json(answers);
    }
    const calls = (await request.json()) as PollCall[];
    return Response.json(await Promise.all(calls.map((c) => stub.poll(c.epoch, c.seq, c.userId, c.limits))));
  },
};
