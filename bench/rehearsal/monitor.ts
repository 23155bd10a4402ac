/**
 * The load generator checks itself (the seeds: "if the load machine's CPU is above 90 %, the numbers
 * are fake"). Once a second: this process's CPU (share of one core: Node runs JS on one), its
 * event-loop delay (p99 and max over the second), the machine's CPU (all cores) and load average,
 * and CPU and memory of named processes of the stack (workerd, the origin) read from /proc, so a
 * saturated part can be named with a measurement. Linux /proc; elsewhere only the first three.
 */
import os from 'node:os';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { cpuMsOf, rssMbOf } from '../lib/proc.js';

/** Above these, the generator (not the stack) may have shaped the figures. */
export const GENERATOR_CPU_LIMIT = 0.9;
export const MACHINE_CPU_LIMIT = 0.9;
export const LOOP_DELAY_LIMIT_MS = 100;
/** Share of the load's seconds over a limit that makes the run's figures unreliable. */
const UNRELIABLE_SHARE = 0.1;

export interface ProcessSample {
  /** Share of one core, 0..n. */
  cpu: number;
  rssMb: number;
}

export interface LoadSample {
  /** ms since the sale's start. */
  t: number;
  /** This process's CPU, share of one core. */
  generatorCpu: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** Machine CPU busy, share of all cores (0..1). */
  machineCpu: number;
  load1: number;
  procs: Record<string, ProcessSample>;
}

export interface LoadSummary {
  cores: number;
  seconds: number;
  generatorCpuMax: number;
  generatorCpuMean: number;
  loopDelayP99MaxMs: number;
  machineCpuMean: number;
  machineCpuMax: number;
  load1Max: number;
  procs: Record<string, { cpuMean: number; cpuMax: number; rssMbMax: number }>;
  /** Why the figures may be the generator's or the machine's rather than the stack's (empty: reliable). */
  unreliable: string[];
}

function machineTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const c of os.cpus()) {
    const t = c.times;
    const all = t.user + t.nice + t.sys + t.idle + t.irq;
    total += all;
    busy += all - t.idle;
  }
  return { busy, total };
}

export class LoadMonitor {
  readonly samples: LoadSample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private loop: IntervalHistogram | null = null;
  private lastCpu = process.cpuUsage();
  private lastAt = performance.now();
  private lastMachine = machineTimes();
  private lastCpuMs = new Map<number, number>();

  /** `procs`: name → pids of the stack's processes to watch (may change; asked each second). */
  constructor(
    private readonly startsAt: number,
    private readonly procs: () => Record<string, number[]> = () => ({}),
  ) {}

  start(): void {
    this.loop = monitorEventLoopDelay({ resolution: 10 });
    this.loop.enable();
    this.timer = setInterval(() => this.sample(), 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.loop?.disable();
  }

  private sample(): void {
    const now = performance.now();
    const wallUs = (now - this.lastAt) * 1000;
    const cpu = process.cpuUsage(this.lastCpu);
    const machine = machineTimes();
    const dTotal = machine.total - this.lastMachine.total;
    const procs: Record<string, ProcessSample> = {};
    for (const [name, pids] of Object.entries(this.procs())) {
      let cpuShare = 0;
      let rssMb = 0;
      for (const pid of pids) {
        const cpuMs = cpuMsOf(pid);
        if (Number.isNaN(cpuMs)) continue; // gone
        const before = this.lastCpuMs.get(pid);
        this.lastCpuMs.set(pid, cpuMs);
        if (before !== undefined) cpuShare += (cpuMs - before) / 1000 / (wallUs / 1e6);
        const rss = rssMbOf(pid);
        if (!Number.isNaN(rss)) rssMb += rss;
      }
      procs[name] = { cpu: round(cpuShare), rssMb: Math.round(rssMb) };
    }
    this.samples.push({
      t: Date.now() - this.startsAt,
      generatorCpu: round((cpu.user + cpu.system) / wallUs),
      loopDelayP99Ms: round(this.loop ? this.loop.percentile(99) / 1e6 : 0),
      loopDelayMaxMs: round(this.loop ? this.loop.max / 1e6 : 0),
      machineCpu: round(dTotal > 0 ? (machine.busy - this.lastMachine.busy) / dTotal : 0),
      load1: round(os.loadavg()[0]!),
      procs,
    });
    this.loop?.reset();
    this.lastCpu = process.cpuUsage();
    this.lastAt = now;
    this.lastMachine = machine;
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

/**
 * Summary over the load phase (samples between `fromMs` and `toMs` after the start) of the
 * coordinator's and every worker's samples; a limit exceeded in over 10 % of the seconds is named.
 */
export function summarizeLoad(generators: LoadSample[][], fromMs: number, toMs: number): LoadSummary {
  const within = generators.map((s) => s.filter((x) => x.t >= fromMs && x.t <= toMs));
  const all = within.flat();
  const seconds = Math.max(0, ...within.map((s) => s.length));
  const mean = (xs: number[]) => (xs.length ? round(xs.reduce((a, b) => a + b, 0) / xs.length) : 0);
  const maxOf = (xs: number[]) => (xs.length ? Math.max(...xs) : 0);
  const over = (pred: (x: LoadSample) => boolean) =>
    Math.max(0, ...within.map((s) => (s.length ? s.filter(pred).length / s.length : 0)));
  const procNames = [...new Set(all.flatMap((x) => Object.keys(x.procs)))];
  const procs: LoadSummary['procs'] = {};
  for (const name of procNames) {
    const xs = all.map((x) => x.procs[name]).filter((p): p is ProcessSample => Boolean(p));
    procs[name] = {
      cpuMean: mean(xs.map((p) => p.cpu)),
      cpuMax: maxOf(xs.map((p) => p.cpu)),
      rssMbMax: maxOf(xs.map((p) => p.rssMb)),
    };
  }
  const unreliable: string[] = [];
  const pct = (share: number) => `${Math.round(share * 100)} %`;
  const cpuOver = over((x) => x.generatorCpu > GENERATOR_CPU_LIMIT);
  if (cpuOver > UNRELIABLE_SHARE)
    unreliable.push(
      `a load-generator process used more than ${pct(GENERATOR_CPU_LIMIT)} of a core in ${pct(cpuOver)} of the seconds (its own CPU limited the load)`,
    );
  const loopOver = over((x) => x.loopDelayP99Ms > LOOP_DELAY_LIMIT_MS);
  if (loopOver > UNRELIABLE_SHARE)
    unreliable.push(
      `a load-generator's event-loop delay p99 exceeded ${LOOP_DELAY_LIMIT_MS} ms in ${pct(loopOver)} of the seconds (latencies include the generator's own delay)`,
    );
  const machineOver = over((x) => x.machineCpu > MACHINE_CPU_LIMIT);
  if (machineOver > UNRELIABLE_SHARE)
    unreliable.push(
      `the machine's CPU was above ${pct(MACHINE_CPU_LIMIT)} in ${pct(machineOver)} of the seconds (generator and stack compete for the cores)`,
    );
  return {
    cores: os.cpus().length,
    seconds,
    generatorCpuMax: maxOf(all.map((x) => x.generatorCpu)),
    generatorCpuMean: mean(all.map((x) => x.generatorCpu)),
    loopDelayP99MaxMs: maxOf(all.map((x) => x.loopDelayP99Ms)),
    machineCpuMean: mean(all.map((x) => x.machineCpu)),
    machineCpuMax: maxOf(all.map((x) => x.machineCpu)),
    load1Max: maxOf(all.map((x) => x.load1)),
    procs,
    unreliable,
  };
}
