/**
 * The crowd's drivers: in this process (`--workers 1`), or spread over worker processes
 * (bench/rehearsal/crowd-worker.ts), each driving every N-th user with its share of the concurrency
 * over its own sockets, checking its own CPU and event loop, and reporting progress (and each new
 * reservation, so the settlement watch stays live) four times a second. At the end each worker
 * sends its whole recorder, merged into the coordinator's.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HttpClient } from './client.js';
import { Driver } from './driver.js';
import { tokenMinter } from './jwt.js';
import { LoadMonitor, type LoadSample } from './monitor.js';
import type { RehearsalOptions } from './options.js';
import { Population } from './population.js';
import type { Recorder, RecorderData } from './recorder.js';

/** Follow-ups (repeats, polls) are not scheduled beyond this long after the last user arrived. */
export const TAIL_MS = 30_000;
const PROGRESS_EVERY_MS = 250;

export interface Sale {
  activityId: string;
  startsAt: number;
  edgeUrl: string;
  originUrl: string;
  /** Follow-ups are not scheduled beyond this long after the last arrival (default TAIL_MS). */
  tailMs?: number;
}

export interface Crowd {
  run(): Promise<void>;
  /** No new request after this (in-flight ones finish); `run` then resolves. */
  stop(): void;
  /** Live, for the progress line. */
  readonly requests: number;
  readonly usersArrived: number;
  readonly arrivalLagMs: number;
  readonly maxArrivalLagMs: number;
  /** Per-second load samples of each generator process, after run(). */
  readonly generatorSamples: LoadSample[][];
}

/** Messages from a worker process. */
type WorkerMessage =
  | { type: 'progress'; requests: number; usersArrived: number; lagMs: number; fresh: [string, string][] }
  | { type: 'done'; rec: RecorderData; maxArrivalLagMs: number; samples: LoadSample[] };

/** One driver over (a slice of) the crowd; used in this process and by each worker process. */
export function createDriver(o: RehearsalOptions, sale: Sale, rec: Recorder, slice?: { index: number; count: number }) {
  const concurrency = Math.max(1, Math.round(o.concurrency / o.workers));
  const edge = new HttpClient(sale.edgeUrl, concurrency);
  const origin = new HttpClient(sale.originUrl, Math.max(2, Math.round(16 / o.workers)));
  const population = new Population({
    users: o.users,
    seed: o.seed,
    firstUserId: o.firstUserId,
    curve: o.curve,
    durationMs: o.durationMs,
    leadMs: o.leadMs,
    mix: o.mix,
  });
  const driver = new Driver(
    {
      activityId: sale.activityId,
      startsAt: sale.startsAt,
      population,
      concurrency,
      pollRatio: o.pollRatio,
      payRatio: o.payRatio,
      tailMs: sale.tailMs ?? TAIL_MS,
      paymentSecret: o.paymentSecret,
      ...(slice ? { slice } : {}),
    },
    edge,
    origin,
    rec,
    // Tokens outlive any rehearsal: the arrival window, a generator far behind it, the tail.
    tokenMinter(o.userTokenSecret, Math.ceil(o.durationMs / 1000) * 4 + 3_600, o.shadow),
  );
  return {
    driver,
    close() {
      edge.close();
      origin.close();
    },
  };
}

/** `--workers 1`: this process drives the whole crowd (and its monitor is the generator's). */
export function localCrowd(o: RehearsalOptions, sale: Sale, rec: Recorder, monitor: LoadMonitor): Crowd {
  const { driver, close } = createDriver(o, sale, rec);
  return {
    async run() {
      try {
        await driver.run();
      } finally {
        close();
      }
    },
    stop() {
      driver.stop();
    },
    get requests() {
      return rec.requests;
    },
    get usersArrived() {
      return rec.usersArrived;
    },
    get arrivalLagMs() {
      return driver.arrivalLagMs;
    },
    get maxArrivalLagMs() {
      return driver.maxArrivalLagMs;
    },
    get generatorSamples() {
      return [monitor.samples];
    },
  };
}

/** `--workers N`: N processes share the crowd; the coordinator (this process) only merges and watches. */
export function workerCrowd(o: RehearsalOptions, sale: Sale, rec: Recorder, monitor: LoadMonitor): Crowd {
  const entry = fileURLToPath(new URL('./crowd-worker.ts', import.meta.url));
  const live = Array.from({ length: o.workers }, () => ({ requests: 0, usersArrived: 0, lagMs: 0 }));
  const samples: LoadSample[][] = [];
  let maxLag = 0;
  const children: ChildProcess[] = [];
  const finished = (child: ChildProcess, index: number) =>
    new Promise<void>((resolve, reject) => {
      child.on('message', (m: WorkerMessage) => {
        if (m.type === 'progress') {
          live[index] = { requests: m.requests, usersArrived: m.usersArrived, lagMs: m.lagMs };
          for (const [id, user] of m.fresh) {
            rec.reservations.set(id, user);
            if (!rec.holders.has(user)) rec.holders.set(user, id);
          }
        } else {
          rec.merge(m.rec);
          maxLag = Math.max(maxLag, m.maxArrivalLagMs);
          samples.push(m.samples);
          live[index]!.lagMs = 0;
          resolve();
        }
      });
      child.once('exit', (code) =>
        reject(new Error(`load-generator worker ${index} exited (code ${code}) before reporting`)),
      );
    });
  return {
    async run() {
      const done: Promise<void>[] = [];
      for (let index = 0; index < o.workers; index++) {
        const child = fork(entry, [], {
          // REHEARSAL_WORKER_NODE_FLAGS (e.g. "--cpu-prof --cpu-prof-dir=prof") profiles the generator itself.
          execArgv: [...(process.env.REHEARSAL_WORKER_NODE_FLAGS ?? '').split(' ').filter(Boolean), '--import', 'tsx'],
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        });
        children.push(child);
        done.push(finished(child, index));
        child.send({ o, sale, slice: { index, count: o.workers } });
      }
      try {
        await Promise.all(done);
      } finally {
        for (const child of children) if (child.exitCode === null) child.kill();
      }
    },
    stop() {
      for (const child of children) if (child.connected) child.send({ type: 'stop' } satisfies CoordinatorMessage);
    },
    get requests() {
      return live.reduce((n, w) => n + w.requests, 0);
    },
    get usersArrived() {
      return live.reduce((n, w) => n + w.usersArrived, 0);
    },
    get arrivalLagMs() {
      return Math.max(0, ...live.map((w) => w.lagMs));
    },
    get maxArrivalLagMs() {
      return maxLag;
    },
    get generatorSamples() {
      return [monitor.samples, ...samples];
    },
  };
}

/** Sent by the coordinator to a running worker: stop driving (crowd.stop()). */
export interface CoordinatorMessage {
  type: 'stop';
}

/** Sent by the coordinator to a worker. */
export interface WorkerStart {
  o: RehearsalOptions;
  sale: Sale;
  slice: { index: number; count: number };
}

export { PROGRESS_EVERY_MS, type WorkerMessage };
