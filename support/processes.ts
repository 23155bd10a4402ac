/**
 * Child processes for tests and benchmarks: the repository's root, a free port, a TypeScript entry
 * point in a Node process of its own, waiting until a server answers HTTP, stopping a child, and
 * finding a process's descendants (workerd under Miniflare, an origin under npm).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The repository's root folder (children run there). */
export const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  return port;
}

export interface SpawnOptions {
  /** Discard the child's stdout (default: inherit it). */
  quiet?: boolean;
  /** Node flags before the entry point (e.g. `--cpu-prof`). */
  nodeFlags?: string[];
}

/** Runs a Node entry point (`args`, relative to ROOT) in its own process, env added to ours, inheriting stderr. */
export function spawnNode(args: string[], env: Record<string, string>, opts: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, [...(opts.nodeFlags ?? []), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', opts.quiet ? 'ignore' : 'inherit', 'inherit'],
  });
}

/** Runs a TypeScript entry point (relative to ROOT) in its own Node process through tsx. */
export function spawnTs(entry: string, env: Record<string, string>, opts: SpawnOptions = {}): ChildProcess {
  return spawnNode(['--import', 'tsx', entry], env, opts);
}

/** Resolves once `url` answers with a status below 500; throws after `timeoutMs`. */
export async function waitForHttp(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`${url} not up after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Sends `signal` to a child still running and waits for it to exit. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  await once(child, 'exit');
}

/** Pids below `root` (up to 5 levels) whose command line contains `match`; empty where /proc is missing. */
export function descendantsMatching(root: number, match: string): number[] {
  const found: number[] = [];
  const children = (pid: number): number[] => {
    try {
      return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const walk = (pid: number, depth: number) => {
    for (const c of children(pid)) {
      try {
        if (readFileSync(`/proc/${c}/cmdline`, 'utf8').includes(match)) found.push(c);
      } catch {
        /* gone */
      }
      if (depth < 4) walk(c, depth + 1);
    }
  };
  walk(root, 0);
  return found;
}
