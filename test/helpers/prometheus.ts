/**
 * Prometheus and promtool for tests (Debian's `prometheus` package, installed by
 * scripts/prometheus.sh): where they are, the repo's rule files, and a private Prometheus server
 * (free port, temporary TSDB) started with a config derived from ops/prometheus/prometheus.yml and
 * the repo's rule files, optionally on a shorter clock.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
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

/** A Prometheus config and the rule files it names, written beside it. */
export interface PrometheusSetup {
  config: string;
  /** Rule files by name (relative to the config, as Prometheus resolves them). */
  ruleFiles: Record<string, string>;
}

/** `30s` → `10s` for a divisor of 3: whole seconds, at least 1. */
function divideDuration(value: number, unit: string, divisor: number): string {
  const seconds = value * (unit === 'm' ? 60 : unit === 'h' ? 3600 : 1);
  return `${Math.max(1, Math.round(seconds / divisor))}s`;
}

/**
 * One of the repo's rule files with every time in it divided by `divisor`: range windows (`[30s]`)
 * and `for:` durations. Rule names (e.g. `…:rate30s`) and expressions are left as they are, so a test
 * runs the shipped rules on a shorter clock.
 */
export function rulesOnShorterClock(text: string, divisor: number): string {
  return text
    .replace(/\[(\d+)([smh])\]/g, (_, n: string, unit: string) => `[${divideDuration(Number(n), unit, divisor)}]`)
    .replace(
      /^(\s+for: )(\d+)([smh])$/gm,
      (_, lead: string, n: string, unit: string) => `${lead}${divideDuration(Number(n), unit, divisor)}`,
    );
}

/**
 * The repo's config with the test's target and intervals (scripts/prometheus-config.ts), its rule
 * files copied beside it with their times divided by `timeDivisor` (1: as shipped).
 */
export function testPrometheusConfig(opts: {
  target: string;
  intervalSeconds: number;
  timeDivisor?: number;
}): PrometheusSetup {
  const divisor = opts.timeDivisor ?? 1;
  const ruleFiles: Record<string, string> = {};
  const config = prometheusConfig(opts).replace(/^(\s+- )(\S+\.yml)$/gm, (_, lead: string, path: string) => {
    const name = basename(path);
    ruleFiles[name] = rulesOnShorterClock(readFileSync(path, 'utf8'), divisor);
    return `${lead}${name}`;
  });
  return { config, ruleFiles };
}

export async function startPrometheus({ config, ruleFiles }: PrometheusSetup): Promise<RunningPrometheus> {
  assertPrometheusInstalled();
  const dir = mkdtempSync(join(tmpdir(), 'seckill-prometheus-'));
  writeFileSync(join(dir, 'prometheus.yml'), config);
  for (const [name, text] of Object.entries(ruleFiles)) writeFileSync(join(dir, name), text);
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
