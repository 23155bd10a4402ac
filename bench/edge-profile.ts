/**
 * A CPU profile of the edge Worker inside workerd — its routes and its Durable Objects share one
 * isolate — taken while a benchmark or the rehearsal loads it: where the edge's time goes, by
 * function, instead of a guess.
 *
 *   BENCH_EDGE_INSPECTOR_PORT=9230 npm run rehearsal -- ...     (or any benchmark that starts the edge)
 *   npx tsx bench/edge-profile.ts --port 9230 [--delay 5] [--seconds 20] [--out edge.cpuprofile] [--top 25]
 *
 * With BENCH_EDGE_INSPECTOR_PORT set, `startEdge` (support/local-edge.ts) opens workerd's V8
 * inspector on that port. This attaches to the edge Worker's isolate, waits `--delay` seconds,
 * samples for `--seconds`, writes the profile (Chrome DevTools → Performance → load it) and prints
 * the functions with the most self time and the most inclusive time (names and lines are the
 * bundle's, edge.mjs). `(program)` is workerd's own native work that V8 cannot attribute (HTTP,
 * RPC, streams), `(idle)` the isolate waiting. The inspector costs some CPU while it samples, and
 * an attached inspector is also sent every `console.log` line, so the request log looks costlier
 * in a profile than it is: compare shares within a profile, not a profiled run's req/s with an
 * unprofiled one.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { WebSocket } from 'undici';

const EDGE_WORKER = 'flash-sale-edge';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Connects to the inspector target of `worker` on `port` and returns a CDP call function. */
async function attach(port: number, worker: string) {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as {
    id: string;
    title?: string;
    webSocketDebuggerUrl: string;
  }[];
  const target = targets.find((t) => `${t.id} ${t.title ?? ''}`.includes(worker));
  if (!target)
    throw new Error(`no inspector target for ${worker} on port ${port}: ${targets.map((t) => t.id).join(', ')}`);
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error(`cannot connect to ${target.webSocketDebuggerUrl}`)), {
      once: true,
    });
  });
  let seq = 0;
  const pending = new Map<number, (result: unknown) => void>();
  ws.addEventListener('message', (event) => {
    const msg = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
    if (msg.id !== undefined) pending.delete(msg.id);
  });
  const call = <T>(method: string, params: object = {}) =>
    new Promise<T>((resolve) => {
      const id = ++seq;
      pending.set(id, resolve as (result: unknown) => void);
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { call, close: () => ws.close() };
}

const frameName = (f: CallFrame) =>
  `${f.functionName || '(anonymous)'} ${f.url.split('/').pop() ?? ''}:${f.lineNumber + 1}`;

/** Self and inclusive time per function (share of all samples), most first. */
export function summarize(profile: CpuProfile): { self: [string, number][]; inclusive: [string, number][] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const timeOf = new Map<number, number>();
  profile.samples.forEach((id, i) => timeOf.set(id, (timeOf.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...timeOf.values()].reduce((a, b) => a + b, 0) || 1;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, t] of timeOf) {
    const leaf = frameName(byId.get(id)!.callFrame);
    self.set(leaf, (self.get(leaf) ?? 0) + t);
    const seen = new Set<string>();
    for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) {
      const name = frameName(byId.get(x)!.callFrame);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + t);
    }
  }
  const sorted = (m: Map<string, number>) =>
    [...m].map(([k, v]) => [k, v / total] as [string, number]).sort((a, b) => b[1] - a[1]);
  return { self: sorted(self), inclusive: sorted(inclusive) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: process.env.BENCH_EDGE_INSPECTOR_PORT ?? '9230' },
      delay: { type: 'string', default: '0' },
      seconds: { type: 'string', default: '20' },
      interval: { type: 'string', default: '200' },
      out: { type: 'string', default: 'edge.cpuprofile' },
      top: { type: 'string', default: '25' },
      worker: { type: 'string', default: EDGE_WORKER },
    },
  });
  const inspector = await attach(Number(values.port), values.worker);
  await new Promise((r) => setTimeout(r, Number(values.delay) * 1000));
  await inspector.call('Profiler.enable');
  await inspector.call('Profiler.setSamplingInterval', { interval: Number(values.interval) });
  await inspector.call('Profiler.start');
  await new Promise((r) => setTimeout(r, Number(values.seconds) * 1000));
  const { profile } = await inspector.call<{ profile: CpuProfile }>('Profiler.stop');
  inspector.close();
  writeFileSync(values.out, JSON.stringify(profile));
  const top = Number(values.top);
  const { self, inclusive } = summarize(profile);
  const seconds = (profile.endTime - profile.startTime) / 1e6;
  console.log(`edge profile: ${seconds.toFixed(1)} s of ${values.worker}, written to ${values.out}`);
  console.log('\nself time');
  for (const [name, share] of self.slice(0, top)) console.log(`${(share * 100).toFixed(1).padStart(6)} %  ${name}`);
  console.log('\ninclusive time');
  for (const [name, share] of inclusive.slice(0, top))
    console.log(`${(share * 100).toFixed(1).padStart(6)} %  ${name}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
