/**
 * The stack a rehearsal runs against: either its own (an origin child process with HTTP +
 * consumers + jobs on its own database, and the edge Worker under a direct Miniflare with matching
 * secrets), or an existing one given by URL. Either way it creates and warms a fresh activity.
 */
import type { ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { constants } from 'node:os';
import { migrate } from '../../origin/platform/db/migrate.js';
import { startEdge, type RunningEdge } from '../../support/local-edge.js';
import { descendantsMatching, freePort, stopChild, waitForHttp } from '../../support/processes.js';
import { BENCH_EDGE_SECRETS, BENCH_SECRETS, spawnOrigin } from '../lib/stack.js';
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
  let origin: ChildProcess | null = null;
  const stopAll = () => Promise.allSettled([origin ? stopChild(origin) : null, edge?.stop()]);
  // Armed before the first child starts: a signal while the stack comes up stops it too.
  const unguard = guardChildren(() => origin, stopAll);
  try {
    edge = await startEdge({ originUrl, secrets: BENCH_EDGE_SECRETS, direct: o.edgeEntry === 'direct' });
    origin = spawnOrigin({
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
        await stopAll();
        unguard();
      },
    };
  } catch (err) {
    await stopAll();
    unguard();
    throw err;
  }
}

/** A signal gives the stack this long to stop before we exit anyway (the 'exit' hook then kills what is left). */
const STOP_ON_SIGNAL_MS = 10_000;
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Our stack's children (the origin, and workerd under Miniflare) must not outlive us on any exit
 * path. A normal end or a failure stops them (runRehearsal's `finally` calls `stop`); a signal stops
 * them, then exits with 128 + its number; `process.exit` or a crash runs the 'exit' hook, which can
 * only act synchronously, so it SIGKILLs whatever still runs. Returns the function that disarms it.
 */
function guardChildren(origin: () => ChildProcess | null, stop: () => Promise<unknown>): () => void {
  const killNow = () => {
    const child = origin();
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const pid of descendantsMatching(process.pid, 'workerd')) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    disarmSignals();
    const grace = setTimeout(() => process.exit(128 + constants.signals[signal]), STOP_ON_SIGNAL_MS);
    void stop().finally(() => {
      clearTimeout(grace);
      process.exit(128 + constants.signals[signal]);
    });
  };
  const disarmSignals = () => {
    for (const s of SIGNALS) process.off(s, onSignal);
  };
  for (const s of SIGNALS) process.on(s, onSignal);
  process.on('exit', killNow);
  return () => {
    disarmSignals();
    process.off('exit', killNow);
  };
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
    ...(o.shadow ? { shadow: true } : {}),
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
