/**
 * What our own stack's processes cost per unit of work over a rehearsal, against a floor measured in
 * the same run (docs/performance.md): workerd's CPU per edge request in the sale mix beside a hello
 * Worker's CPU per request under the same client, on the same runtime and entry (direct socket or
 * Miniflare's entry worker), right after the sale; and the origin's CPU per order (its HTTP routes,
 * the reserve script calls, settlement and its jobs, from the crowd's start to the last order
 * settled). CPU time is read from /proc, which other work on a shared machine moves far less than
 * rates. An existing stack's processes are not ours to read: there the figures are null.
 */
import { Miniflare } from 'miniflare';
import { COMPATIBILITY_DATE } from '../../support/local-edge.js';
import { descendantsMatching } from '../../support/processes.js';
import { cpuMsOf } from '../lib/proc.js';
import { HttpClient } from './client.js';

export interface StackCost {
  /** workerd CPU (µs) per request the crowd sent to the edge, over the load. */
  edgeCpuUsPerRequest: number | null;
  /** A hello Worker's workerd CPU (µs) per request, driven by the same client right after the sale. */
  helloCpuUsPerRequest: number | null;
  helloRequests: number;
  /** edge ÷ hello (goal ≤ 1.2, docs/performance.md). */
  ratioToHello: number | null;
  /** The origin process's CPU (ms) per order settled, from the crowd's start to the last order. */
  originCpuMsPerOrder: number | null;
  /** Why a figure is null, when one is. */
  note?: string;
}

/** CPU time (ms) of a set of processes since `start()`; pids that exit meanwhile count until they go. */
export class CpuMeter {
  private readonly before = new Map<number, number>();

  constructor(private readonly pids: () => number[]) {}

  start(): this {
    for (const pid of this.pids()) this.before.set(pid, cpuMsOf(pid));
    return this;
  }

  /** ms used since start by the processes running at start; NaN where /proc is missing. */
  elapsedMs(): number {
    let sum = 0;
    for (const [pid, at] of this.before) {
      const now = cpuMsOf(pid);
      if (Number.isNaN(at)) return NaN;
      if (!Number.isNaN(now)) sum += now - at;
    }
    return this.before.size ? sum : NaN;
  }
}

/**
 * A hello Worker's workerd CPU per request: `seconds` of closed-loop GETs over `connections`
 * keep-alive sockets of the rehearsal's own client, then the Worker is stopped.
 */
export async function measureHello(opts: {
  seconds: number;
  connections: number;
  direct: boolean;
}): Promise<{ cpuUsPerRequest: number; requests: number }> {
  const running = new Set(descendantsMatching(process.pid, 'workerd'));
  const mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    cf: false,
    workers: [
      {
        name: 'hello',
        modules: true,
        script: 'export default { fetch() { return new Response("hello"); } };',
        compatibilityDate: COMPATIBILITY_DATE,
        ...(opts.direct ? { unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }] } : {}),
      },
    ],
  });
  try {
    const entry = await mf.ready;
    const url = (opts.direct ? await mf.unsafeGetDirectURL('hello') : entry).toString();
    const meter = new CpuMeter(() => descendantsMatching(process.pid, 'workerd').filter((p) => !running.has(p)));
    const client = new HttpClient(url, opts.connections);
    try {
      // Warm the sockets and the isolate before measuring.
      await Promise.all(Array.from({ length: opts.connections }, () => client.request('GET', '/', {})));
      meter.start();
      const until = performance.now() + opts.seconds * 1000;
      let requests = 0;
      await Promise.all(
        Array.from({ length: opts.connections }, async () => {
          while (performance.now() < until) {
            const answer = await client.request('GET', '/', {});
            if (answer.status !== 200) throw new Error(`hello Worker answered ${answer.status}`);
            requests++;
          }
        }),
      );
      const cpuMs = meter.elapsedMs();
      return { cpuUsPerRequest: requests ? (cpuMs * 1000) / requests : NaN, requests };
    } finally {
      client.close();
    }
  } finally {
    await mf.dispose();
  }
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const finite = (x: number) => (Number.isFinite(x) ? x : null);

/** The figures from the meters read at the end of the load and of settlement, and the hello run. */
export function stackCost(args: {
  edgeCpuMs: number;
  edgeRequests: number;
  originCpuMs: number;
  orders: number;
  hello: { cpuUsPerRequest: number; requests: number } | null;
}): StackCost {
  const edge = args.edgeRequests > 0 ? finite((args.edgeCpuMs * 1000) / args.edgeRequests) : null;
  const hello = args.hello ? finite(args.hello.cpuUsPerRequest) : null;
  const origin = args.orders > 0 ? finite(args.originCpuMs / args.orders) : null;
  return {
    edgeCpuUsPerRequest: edge === null ? null : round1(edge),
    helloCpuUsPerRequest: hello === null ? null : round1(hello),
    helloRequests: args.hello?.requests ?? 0,
    ratioToHello: edge !== null && hello !== null && hello > 0 ? Math.round((edge / hello) * 100) / 100 : null,
    originCpuMsPerOrder: origin === null ? null : Math.round(origin * 1000) / 1000,
  };
}

/** The stack's CPU per unit of work against the hello floor, one line (console and HTML report). */
export function stackCostText(c: StackCost): string {
  const us = (x: number | null) => (x === null ? '—' : `${x.toFixed(0)} µs`);
  const ratio = c.ratioToHello === null ? '—' : `${c.ratioToHello.toFixed(2)}×`;
  const origin = c.originCpuMsPerOrder === null ? '—' : `${c.originCpuMsPerOrder.toFixed(2)} ms`;
  return `edge (workerd) ${us(c.edgeCpuUsPerRequest)} per request against a hello Worker's ${us(c.helloCpuUsPerRequest)} (${ratio}, goal ≤ 1.2×; hello ${c.helloRequests.toLocaleString('en-US')} requests); origin ${origin} per order`;
}
