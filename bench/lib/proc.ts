/**
 * What a benchmark reads of processes from /proc (Linux): CPU time and memory of a process, of the
 * workerd runtimes this process started (Miniflare's), and which process is the MySQL server. On a
 * shared machine CPU per unit of work moves far less than a rate does. Where /proc is missing the
 * figures are NaN (or undefined for a pid). Also the machine's load average, printed beside figures.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** The machine's cores and load average, for a line under a benchmark's figures. */
export function machineLoad(): { cores: number; loadAverage: string } {
  return {
    cores: os.cpus().length,
    loadAverage: os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' / '),
  };
}

/** USER_HZ on Linux: /proc counts CPU time in ticks of 10 ms. */
const MS_PER_TICK = 10;

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces); null when gone. */
function statFields(pid: number | string): { comm: string; rest: string[] } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    return { comm: stat.slice(stat.indexOf('(') + 1, close), rest: stat.slice(close + 2).split(' ') };
  } catch {
    return null;
  }
}

/** CPU time (user + system, ms) a process has used so far; NaN where /proc is missing. */
export function cpuMsOf(pid: number | undefined): number {
  const f = pid === undefined ? null : statFields(pid);
  return f ? (Number(f.rest[11]) + Number(f.rest[12])) * MS_PER_TICK : NaN;
}

/** Resident memory of a process (MB); NaN where /proc is missing. */
export function rssMbOf(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return NaN;
  }
}

/** Pids of the workerd processes this process started; null where /proc is missing. */
function workerdChildren(): number[] | null {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return null;
  }
  const pids: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(name); // null: gone meanwhile
    // The parent pid: only the runtimes this benchmark started.
    if (f && f.comm.startsWith('workerd') && Number(f.rest[1]) === process.pid) pids.push(Number(name));
  }
  return pids;
}

const sumOver = (pids: number[] | null, figure: (pid: number) => number) =>
  pids === null ? NaN : pids.map(figure).reduce((sum, x) => sum + (Number.isNaN(x) ? 0 : x), 0);

/** CPU time (ms, user + system) of the workerd processes this process started. */
export function workerdCpuMs(): number {
  return sumOver(workerdChildren(), cpuMsOf);
}

/** RSS (MB) of the workerd processes this process started. */
export function workerdRssMb(): number {
  return sumOver(workerdChildren(), rssMbOf);
}

/** The pids of processes named one of `names` (/proc/<pid>/comm). */
function pidsNamed(names: string[]): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (names.includes(readFileSync(`/proc/${entry}/comm`, 'utf8').trim())) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * The MySQL/MariaDB server's pid, to read its CPU time per unit of work: BENCH_MYSQLD_PID, else the
 * one `mariadbd`/`mysqld` process on this machine (undefined when there is none or several).
 */
export function mysqldPid(): number | undefined {
  if (process.env.BENCH_MYSQLD_PID) return Number(process.env.BENCH_MYSQLD_PID);
  const found = pidsNamed(['mariadbd', 'mysqld']);
  return found.length === 1 ? found[0] : undefined;
}

/** The Redis server's pid: BENCH_REDIS_PID, else the one `redis-server` process here (undefined otherwise). */
export function redisServerPid(): number | undefined {
  if (process.env.BENCH_REDIS_PID) return Number(process.env.BENCH_REDIS_PID);
  const found = pidsNamed(['redis-server']);
  return found.length === 1 ? found[0] : undefined;
}
