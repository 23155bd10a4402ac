/**
 * The stack a rehearsal runs against: either its own (an origin child process with HTTP +
 * consumers + jobs on its own database, and the edge Worker under a direct Miniflare with matching
 * secrets), or an existing one given by URL. Either way it creates and warms a fresh activity.
 */
import { randomInt } from 'node:crypto';
import { migrate } from '../../origin/db/migrate.js';
import { startEdge, type RunningEdge } from '../lib/local-edge.js';
import { BENCH_EDGE_SECRETS, BENCH_SECRETS, freePort, spawnTs, stopChild, waitForHttp } from '../lib/stack.js';
import { descendantsMatching } from './monitor.js';
import type { RehearsalOptions } from './options.js';

export interface Stack {
  edgeUrl: string;
  originUrl: string;
  own: boolean;
  /** Pids of our own stack's processes by name, for the load monitor (empty for an existing stack). */
  pids(): Record<string, number[]>;
  stop(): Promise<void>;
}

export async function startStack(o: RehearsalOptions): Promise<Stack> {
  if (o.edgeUrl && o.originUrl)
    return { edgeUrl: o.edgeUrl, originUrl: o.originUrl, own: false, pids: () => ({}), async stop() {} };
  await migrate(o.mysqlUrl);
  const port = await freePort();
  const originUrl = `http://127.0.0.1:${port}`;
  let edge: RunningEdge | null = null;
  let origin: ReturnType<typeof spawnTs> | null = null;
  try {
    edge = await startEdge({ originUrl, secrets: BENCH_EDGE_SECRETS });
    origin = spawnTs('origin/main.ts', {
      ...BENCH_SECRETS,
      PORT: String(port),
      MYSQL_URL: o.mysqlUrl,
      EDGE_URL: edge.url,
      ORIGIN_ROLE: 'all',
      LOG_LEVEL: process.env.REHEARSAL_ORIGIN_LOG_LEVEL ?? 'warn',
      MYSQL_POOL_SIZE: '16',
      SETTLE_WORKERS: '4',
      TIMEOUT_SCAN_MS: '1000',
      ...pickEnv('REHEARSAL_ORIGIN_'),
    });
    const exited = new Promise<never>((_, reject) =>
      origin!.once('exit', (code) => reject(new Error(`origin exited early (code ${code})`))),
    );
    await Promise.race([waitForHttp(`${originUrl}/healthz`), exited]);
    const running = { edge, origin };
    return {
      edgeUrl: edge.url,
      originUrl,
      own: true,
      // Miniflare runs workerd as a child of this process; the origin is our child too.
      pids: () => ({
        'edge (workerd)': descendantsMatching(process.pid, 'workerd'),
        origin: running.origin.pid ? [running.origin.pid] : [],
      }),
      async stop() {
        await Promise.allSettled([stopChild(running.origin), running.edge.stop()]);
      },
    };
  } catch (err) {
    await Promise.allSettled([origin ? stopChild(origin) : null, edge?.stop()]);
    throw err;
  }
}

/** `REHEARSAL_ORIGIN_X=v` in our environment becomes `X=v` for the origin child (tuning without code). */
function pickEnv(prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (k.startsWith(prefix) && k !== 'REHEARSAL_ORIGIN_LOG_LEVEL' && v !== undefined) out[k.slice(prefix.length)] = v;
  return out;
}

export async function adminRequest<T = unknown>(
  o: RehearsalOptions,
  originUrl: string,
  method: string,
  path: string,
  body?: unknown,
) {
  const res = await fetch(originUrl + path, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${o.adminToken}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json: unknown = await res.json().catch(() => null);
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  // The origin's answer, as the caller names it (its shape is the contract's, not checked here).
  return json as T;
}

/** A fresh activity starting `leadMs` from now, warmed; returns its id and start. */
export async function createSale(o: RehearsalOptions, originUrl: string, edgeUrl: string) {
  const activityId = o.activityId ?? String(randomInt(1, 2 ** 47));
  const startsAt = Date.now() + o.leadMs;
  await adminRequest(o, originUrl, 'POST', '/admin/activities', {
    activityId,
    skuId: activityId,
    title: `rehearsal ${o.users} users / ${o.stock} units`,
    stock: o.stock,
    startsAt: new Date(startsAt).toISOString(),
    endsAt: new Date(startsAt + 6 * 3_600_000).toISOString(),
    paymentTimeoutSeconds: o.paymentTimeoutSeconds,
    admissionRatePerSec: o.admissionRate,
    ...(o.admission === 'lottery' ? { admission: 'lottery', lotteryWindowMs: Math.round(o.lotteryWindowMs) } : {}),
    overflow: o.overflow,
  });
  await adminRequest(o, originUrl, 'POST', `/admin/activities/${activityId}/warmup`);
  // The origin pushed the activity to the edge; make sure the edge answers for it before the crowd comes.
  for (let i = 0; ; i++) {
    const res = await fetch(`${edgeUrl}/api/activities/${activityId}`);
    if (res.status === 200) break;
    if (i > 50) throw new Error(`edge does not know activity ${activityId}: ${res.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { activityId, startsAt };
}
