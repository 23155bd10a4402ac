/**
 * Prometheus and promtool for tests (Debian's `prometheus` package, installed by
 * scripts/prometheus.sh): where they are, the repo's rule files, and a private Prometheus server
 * (free port, temporary TSDB) started with a config derived from ops/prometheus/prometheus.yml.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../support/processes.js';
import { PROMETHEUS_DIR, prometheusConfig } from '../../scripts/prometheus-config.js';

export const run = promisify(execFile);
export { PROMETHEUS_DIR };
export const PROMETHEUS_PATH = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';
export const PROMTOOL_PATH = process.env.PROMTOOL_PATH ?? '/usr/bin/promtool';

export function assertPrometheusInstalled(): void {
  if (!existsSync(PROMETHEUS_PATH) || !existsSync(PROMTOOL_PATH))
    throw new Error(
      `no Prometheus at ${PROMETHEUS_PATH} / promtool at ${PROMTOOL_PATH}: run scripts/prometheus.sh ` +
        `(installs Debian's 'prometheus') or set PROMETHEUS_PATH and PROMTOOL_PATH.`,
    );
}

export interface RunningPrometheus {
  url: string;
  /** GET /api/v1/<path>; throws unless the answer is `status: success`. */
  api<T = any>(path: string): Promise<T>;
  stop(): Promise<void>;
}

/** The repo's config with the test's target and intervals (scripts/prometheus-config.ts). */
export function testPrometheusConfig(opts: { target: string; intervalSeconds: number }): string {
  return prometheusConfig(opts);
}

export async function startPrometheus(config: string): Promise<RunningPrometheus> {
  assertPrometheusInstalled();
  const dir = mkdtempSync(join(tmpdir(), 'seckill-prometheus-'));
  writeFileSync(join(dir, 'prometheus.yml'), config);
  let port = await freePort();
  while (port >= 55_000) port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const output: string[] = [];
  const server: ChildProcess = spawn(
    PROMETHEUS_PATH,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  server.stderr!.on('data', (chunk) => output.push(String(chunk)));
  const api = async (path: string) => {
    const res = await fetch(`${url}/api/v1/${path}`);
    const body = (await res.json()) as { status: string; data: any; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  for (let i = 0; ; i++) {
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (server.exitCode !== null || i > 300) {
      server.kill('SIGKILL');
      throw new Error(`prometheus did not start: ${output.join('')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    api,
    async stop() {
      if (server.exitCode === null && server.signalCode === null) {
        const exited = new Promise((r) => server.once('exit', r));
        server.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
