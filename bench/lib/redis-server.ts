/**
 * A redis-server of a benchmark's own, in a temporary folder, with no persistence (so a figure is
 * Redis's work, not the disk's): `--replicaof` and the like go in `extra`. On a free port below 55000,
 * tried again on another when it does not come up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../support/processes.js';

export interface BenchRedis {
  port: number;
  url: string;
  stop(): Promise<void>;
}

export async function startBenchRedis(extra: string[] = []): Promise<BenchRedis> {
  const dir = mkdtempSync(join(os.tmpdir(), 'seckill-bench-redis-'));
  for (;;) {
    let port = await freePort();
    while (port >= 55_000) port = await freePort();
    const server: ChildProcess = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra],
      { stdio: 'ignore' },
    );
    await new Promise((r) => setTimeout(r, 300));
    const probe = new Redis(port, '127.0.0.1', {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
    });
    const up = await probe
      .connect()
      .then(() => probe.ping())
      .then(
        () => server.exitCode === null,
        () => false,
      );
    probe.disconnect();
    if (up)
      return {
        port,
        url: `redis://127.0.0.1:${port}`,
        async stop() {
          if (server.exitCode === null && server.signalCode === null) {
            server.kill('SIGTERM');
            await new Promise((r) => server.once('exit', r));
          }
          rmSync(dir, { recursive: true, force: true });
        },
      };
    server.kill();
  }
}
