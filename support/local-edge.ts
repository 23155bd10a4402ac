/**
 * Starts the edge Worker in workerd through `new Miniflare({...})` directly — workerd's own socket,
 * no wrangler proxy — for benchmarks, the rehearsal and Node tests (test/helpers/edge.ts). edge/index.ts
 * is bundled with esbuild (offline; `bundleWorker` bundles any Worker the same way); the Durable
 * Objects (SQLite-backed) and the sale page assets are wired as in wrangler.toml; the caller gives the
 * secrets (`vars` may override any binding).
 */
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Keep in step with wrangler.toml. */
export const COMPATIBILITY_DATE = '2026-04-01';
const EDGE_WORKER = 'flash-sale-edge';

/** The edge's secrets (docs/design.md §9): who signs user tokens, tickets, and edge↔origin calls. */
export interface EdgeSecrets {
  USER_TOKEN_SECRET: string;
  TICKET_KEYS: string;
  EDGE_ORIGIN_SECRET: string;
}

export interface StartEdgeOptions {
  originUrl: string;
  secrets: EdgeSecrets;
  /** workerd's listening port on 127.0.0.1; 0 / absent = a free one. */
  port?: number;
  /** Extra or overriding vars/secrets (ORIGIN_TIMEOUT_MS, USER_GATE_SHARDS, TICKET_KEYS, ...). */
  vars?: Record<string, string>;
  /** Print the Worker's per-request JSON log lines (default: discard them). */
  logs?: boolean;
  /** Receives each line the Worker writes to stdout (its per-request JSON log lines). */
  onLog?: (line: string) => void;
  /**
   * Serve the edge Worker on a socket of its own (Miniflare's `unsafeDirectSockets`) instead of
   * through Miniflare's entry worker, which routes every request to the Worker in a second hop
   * (its cost is in docs/performance.md). Production has no such
   * hop, so load that measures the edge (the rehearsal) goes direct. `url` is then the Worker's own
   * socket; `port` is that socket's port.
   */
  direct?: boolean;
  /**
   * Open workerd's V8 inspector on this port, for CPU profiles of the Worker (bench/edge-profile.ts).
   * Default: BENCH_EDGE_INSPECTOR_PORT from the environment, else none.
   */
  inspectorPort?: number;
  /**
   * Keep the Durable Objects' storage in this folder (Miniflare's `durableObjectsPersist`), so a new
   * edge started on the same folder after `stop()` finds it: a restart of workerd. Default: a fresh
   * folder removed on stop.
   */
  persistDir?: string;
}

export interface RunningEdge {
  url: string;
  stop(): Promise<void>;
}

/** Bundles a Worker's entry point (relative to the repository's root) into one ES module for workerd. */
export async function bundleWorker(entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    external: ['cloudflare:*'],
    logLevel: 'error',
  });
  return outfile;
}

export function bundleEdge(outdir: string): Promise<string> {
  return bundleWorker('edge/index.ts', join(outdir, 'edge.mjs'));
}

/** BENCH_EDGE_INSPECTOR_PORT, when set: a TCP port, else a clear error before workerd starts. */
function inspectorPortFromEnv(): number | undefined {
  const raw = process.env.BENCH_EDGE_INSPECTOR_PORT;
  if (!raw) return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw new Error(`BENCH_EDGE_INSPECTOR_PORT must be a TCP port (1-65535), not "${raw}"`);
  return port;
}

export async function startEdge(opts: StartEdgeOptions): Promise<RunningEdge> {
  const dir = mkdtempSync(join(tmpdir(), 'edge-'));
  const scriptPath = await bundleEdge(dir);
  const stdio = (stdout: Readable, stderr: Readable) => {
    if (opts.logs) stdout.pipe(process.stdout);
    if (opts.onLog) {
      let rest = '';
      stdout.on('data', (chunk: Buffer) => {
        const lines = (rest + chunk.toString('utf8')).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) if (line.trim()) opts.onLog!(line);
      });
    } else if (!opts.logs) stdout.resume();
    stderr.pipe(process.stderr);
  };
  // The assets sit in a second worker reached through the ASSETS service binding, so API requests
  // go straight into the edge Worker instead of through Miniflare's asset router first (≈3× cheaper).
  const direct = opts.direct === true;
  const inspectorPort = opts.inspectorPort ?? inspectorPortFromEnv();
  const mf = new Miniflare({
    host: '127.0.0.1',
    port: direct ? 0 : (opts.port ?? 0),
    cf: false,
    handleRuntimeStdio: stdio,
    ...(opts.persistDir === undefined ? {} : { durableObjectsPersist: opts.persistDir }),
    ...(inspectorPort === undefined ? {} : { inspectorPort }),
    workers: [
      {
        name: EDGE_WORKER,
        modules: true,
        scriptPath,
        modulesRoot: dir,
        compatibilityDate: COMPATIBILITY_DATE,
        bindings: {
          ORIGIN_URL: opts.originUrl,
          ORIGIN_TIMEOUT_MS: '800',
          USER_GATE_SHARDS: '16',
          TICKET_TTL_SECONDS: '60',
          ...opts.secrets,
          ...opts.vars,
        },
        durableObjects: {
          ACTIVITY: { className: 'ActivityDO', useSQLite: true },
          USER_GATE: { className: 'UserGateDO', useSQLite: true },
          ADMISSION: { className: 'AdmissionDO', useSQLite: true },
          LIVE_ACTIVITIES: { className: 'LiveActivitiesDO', useSQLite: true },
          EDGE_FIGURES: { className: 'EdgeFiguresDO', useSQLite: true },
        },
        serviceBindings: { ASSETS: 'flash-sale-assets' },
        ...(direct ? { unsafeDirectSockets: [{ host: '127.0.0.1', port: opts.port ?? 0 }] } : {}),
      },
      {
        name: 'flash-sale-assets',
        modules: true,
        script: 'export default { fetch() { return new Response(null, { status: 404 }); } };',
        compatibilityDate: COMPATIBILITY_DATE,
        assets: { directory: join(root, 'edge/public'), routerConfig: { has_user_worker: false } },
      },
    ],
  });
  const entryUrl = await mf.ready;
  const url = (direct ? await mf.unsafeGetDirectURL(EDGE_WORKER) : entryUrl).toString().replace(/\/$/, '');
  return {
    url,
    async stop() {
      await mf.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
