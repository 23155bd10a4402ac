/**
 * The draw's passes over the closed list on several cores: the main thread reads the
 * pages from Redis and hands each to an idle hashing worker (draw-hash-worker.ts; DRAW_HASH_WORKERS
 * of them) or, when none is idle, hashes it itself. The outcome does not depend on who hashed what:
 *  - pass 1 puts the pages' digest lines into the digest in entry order, whoever spelled them;
 *  - pass 2 keeps a bounded selection per thread and merges them (draw-selection.ts offerKept: the
 *    smallest `capacity` of the union are the smallest of the parts' smallest); a thread does not
 *    keep an entrant that another thread's full selection already rules out (SharedCut).
 * A worker that fails (an error, or it stopped) fails the pass: the draw throws and the DrawJob
 * retries it with fresh workers; nothing is recorded from a failed pass. `close()` stops them all.
 * Memory: each worker holds at most PAGES_PER_WORKER pages and one selection of `capacity`.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { setImmediate } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Sale } from '../redis/redis-store.js';
import { forEachEntryPage, type EntryReader, type ReadSettings } from './draw-entries.js';
import { DigestLines, SharedCut, TicketPicker, type HashReply, type HashRequest } from './draw-page-hash.js';
import type { Candidate } from './draw-selection.js';

/** Pages a worker is given ahead: one to hash, one waiting, so it never idles while the main thread hashes. */
const PAGES_PER_WORKER = 2;
/** Pass 1: digest lines held beyond the workers' pages while an earlier page is still being hashed. */
const LINES_HELD = 8;

export class DrawHashThreads {
  private constructor(private readonly workers: HashWorker[]) {}

  /**
   * Starts `count` workers (0: the main thread hashes alone). Pages sent before a worker has loaded
   * wait in its queue (at most PAGES_PER_WORKER), so every worker hashes from the first pass on.
   */
  static start(count: number, answerMs: number, onWorker?: (worker: Worker) => void): DrawHashThreads {
    const workers: HashWorker[] = [];
    for (let i = 0; i < count; i++) {
      const thread = spawnWorker();
      onWorker?.(thread);
      workers.push(new HashWorker(thread, answerMs));
    }
    return new DrawHashThreads(workers);
  }

  /** Pass 1: SHA-256 of the digest lines over the closed list in entry order (hex). */
  async digest(entries: EntryReader, sale: Sale, read: ReadSettings, seed: string): Promise<string> {
    const local = new DigestLines(seed);
    this.tell({ kind: 'digest', seed });
    const digest = createHash('sha256');
    // The pages' lines in entry order; a worker's are there once it answers.
    const ordered: { lines?: Uint8Array; hashed?: Promise<Uint8Array> }[] = [];
    const flushReady = () => {
      while (ordered.length > 0 && ordered[0]!.lines) digest.update(ordered.shift()!.lines!);
    };
    await forEachEntryPage(entries, sale, read, async (page, first) => {
      this.check();
      const worker = this.idleWorker();
      if (worker) {
        const slot: (typeof ordered)[number] = {};
        slot.hashed = worker.ask({ kind: 'page', page, first }).then((r) => {
          if (r.kind !== 'lines') throw new Error(`draw hashing worker answered ${r.kind} to a digest page`);
          return (slot.lines = r.bytes.subarray(0, r.length));
        });
        slot.hashed.catch(() => {});
        ordered.push(slot);
      } else {
        const { bytes, length } = local.of(page);
        ordered.push({ lines: bytes.subarray(0, length) });
        await this.letAnswersIn();
      }
      flushReady();
      while (ordered.length > LINES_HELD + PAGES_PER_WORKER * this.workers.length) {
        await ordered[0]!.hashed;
        flushReady();
      }
    });
    for (const slot of ordered) digest.update(slot.lines ?? (await slot.hashed!));
    this.check();
    return digest.digest('hex');
  }

  /** Pass 2: the next `capacity` entrants in draw order strictly after `after`, and the list's length. */
  async select(
    entries: EntryReader,
    sale: Sale,
    read: ReadSettings,
    seed: string,
    digest: string,
    capacity: number,
    after: Int32Array | null,
  ): Promise<{ candidates: Candidate[]; entrants: number }> {
    // Slot 0 is the main thread's, slot i + 1 worker i's; the main thread alone needs no cut.
    const cutSlots = SharedCut.slotsFor(this.workers.length + 1);
    const cut = this.workers.length > 0 ? new SharedCut(cutSlots, 0) : null;
    const local = new TicketPicker(seed, digest, capacity, after, cut);
    this.workers.forEach((w, i) => w.tell({ kind: 'select', seed, digest, capacity, after, cutSlots, cutSlot: i + 1 }));
    const used = new Set<HashWorker>();
    const picked: Promise<HashReply>[] = [];
    const entrants = await forEachEntryPage(entries, sale, read, (page, first) => {
      this.check();
      const worker = this.idleWorker();
      if (!worker) {
        local.add(page, first);
        return this.letAnswersIn();
      }
      used.add(worker);
      const answer = worker.ask({ kind: 'page', page, first });
      answer.catch(() => {});
      picked.push(answer);
    });
    await Promise.all(picked);
    for (const worker of used) {
      const r = await worker.ask({ kind: 'kept' });
      if (r.kind !== 'kept') throw new Error(`draw hashing worker answered ${r.kind} to kept`);
      local.selection.offerKept(r.kept);
    }
    this.check();
    return { candidates: local.selection.sorted(), entrants };
  }

  /** Stops every worker (on every path out of the draw). */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.stop()));
  }

  private tell(m: HashRequest): void {
    for (const w of this.workers) w.tell(m);
  }

  /** Throws the first worker failure: the pass must not go on without the pages that worker had. */
  private check(): void {
    for (const w of this.workers) w.check();
  }

  /**
   * After the main thread hashed a page: one turn of the event loop, so that the workers' answers are
   * taken in (a page already read from Redis is awaited without one) and they get their next pages.
   */
  private async letAnswersIn(): Promise<void> {
    if (this.workers.length > 0) await setImmediate();
  }

  private idleWorker(): HashWorker | undefined {
    return this.workers.find((w) => w.waiting < PAGES_PER_WORKER);
  }
}

/** One worker thread and its answers, which come in the order of the requests. */
class HashWorker {
  private failure: Error | null = null;
  private stopping = false;
  private readonly answers: {
    resolve: (r: HashReply) => void;
    reject: (e: Error) => void;
    timer: NodeJS.Timeout;
  }[] = [];

  /** @param answerMs DRAW_HASH_ANSWER_MS: a request not answered within it fails the pass (a hung worker). */
  constructor(
    private readonly thread: Worker,
    private readonly answerMs: number,
  ) {
    thread.on('message', (r: HashReply) => {
      const waiting = this.answers.shift();
      if (!waiting) return;
      clearTimeout(waiting.timer);
      waiting.resolve(r);
    });
    thread.on('error', (err) => this.fail(err));
    thread.on('messageerror', (err) => this.fail(err));
    thread.on('exit', (code) => this.fail(new Error(`draw hashing worker stopped (exit code ${code})`)));
  }

  get waiting(): number {
    return this.answers.length;
  }

  check(): void {
    if (this.failure) throw this.failure;
  }

  tell(m: HashRequest): void {
    this.check();
    this.thread.postMessage(m);
  }

  ask(m: HashRequest): Promise<HashReply> {
    this.check();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new Error(`draw hashing worker did not answer within ${this.answerMs} ms (DRAW_HASH_ANSWER_MS)`));
        void this.thread.terminate();
      }, this.answerMs);
      this.answers.push({ resolve, reject, timer });
      this.thread.postMessage(m);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.thread.terminate();
  }

  private fail(err: Error): void {
    this.failure ??= this.stopping ? new Error('draw hashing worker stopped by the draw') : err;
    for (const a of this.answers.splice(0)) {
      clearTimeout(a.timer);
      a.reject(this.failure);
    }
  }
}

/**
 * The compiled worker beside this module (dist/, production); from TypeScript source (tests, tsx)
 * the worker's source bundled once with esbuild (a devDependency) and run as code, since a worker
 * thread does not inherit the TypeScript loader of its parent.
 */
function spawnWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./draw-hash-worker.js', import.meta.url));
  workerBundle ??= bundleWorker();
  return new Worker(workerBundle, { eval: true });
}

let workerBundle: string | null = null;

function bundleWorker(): string {
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const built = esbuild.buildSync({
    entryPoints: [fileURLToPath(new URL('./draw-hash-worker.ts', import.meta.url))],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'silent',
  });
  return built.outputFiles[0]!.text;
}
