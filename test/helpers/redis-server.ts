/**
 * One real redis-server for a test that needs persistence: AOF on (`appendfsync` as asked) in a
 * temporary folder, on a free port below 55000. `kill()` SIGKILLs it (a crash: nothing flushed
 * beyond what the fsync policy wrote), `restart()` starts it again on the same port and folder, so
 * it loads its append-only file. `freeze()` stops the process (SIGSTOP: connections stay open, nothing
 * answers) until `thaw()` (SIGCONT). `stop()` ends it and removes the folder.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../support/processes.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface PersistentRedis {
  port: number;
  url: string;
  kill(): Promise<void>;
  /** Stops the process where it is: no command gets an answer until thaw(). */
  freeze(): void;
  thaw(): void;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPersistentRedis(appendfsync: 'always' | 'everysec'): Promise<PersistentRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'seckill-redis-aof-'));
  let port = await freePort();
  while (port >= 55_000) port = await freePort();
  let server: ChildProcess | null = null;

  const up = async () => {
    server = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        appendfsync,
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; ; i++) {
      const pong = await run('redis-cli', ['-p', String(port), 'PING']).then(
        (r) => r.stdout.trim(),
        () => '',
      );
      if (pong === 'PONG') return;
      if (i > 200) throw new Error(`redis-server on ${port} did not start`);
      await sleep(25);
    }
  };
  const down = async (signal: NodeJS.Signals) => {
    const s = server;
    if (!s || s.exitCode !== null || s.signalCode !== null) return;
    const exited = new Promise((r) => s.once('exit', r));
    s.kill(signal);
    await exited;
  };
  await up();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill: () => down('SIGKILL'),
    freeze: () => void server?.kill('SIGSTOP'),
    thaw: () => void server?.kill('SIGCONT'),
    restart: up,
    async stop() {
      server?.kill('SIGCONT'); // a frozen server cannot act on SIGTERM
      await down('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
