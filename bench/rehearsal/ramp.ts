/**
 * The shadow ramp (`--planned-peak R`, docs/rehearsal.md): the crowd offered in steps of rising rate
 * up to peakFactor × R, each step a fresh crowd of its own users arriving evenly over the step; per
 * step the rate offered and served and the layers' signals (step-signals.ts), judged by
 * layer-verdict.ts. Then the switch drill (drill.ts) under a crowd at R. All along, the guard
 * (guard.ts) watches the real traffic and stops the rehearsal early when it crosses a line.
 */
import { localCrowd, workerCrowd, type Crowd, type Sale } from './crowd.js';
import { runDrill, type DrillReport } from './drill.js';
import { baselineOf, guardTrip, windowStart, type GuardReport } from './guard.js';
import { HttpClient } from './client.js';
import { tokenMinter } from './jwt.js';
import {
  firstToGiveWay,
  layersGivingWay,
  LAYER_LIMITS,
  type GaveWay,
  type LayerVerdict,
  type StepSignals,
} from './layer-verdict.js';
import type { LoadMonitor, LoadSample } from './monitor.js';
import type { RehearsalOptions } from './options.js';
import type { RampOptions } from './ramp-options.js';
import { Recorder } from './recorder.js';
import type { SettlementWatch } from './settlement.js';
import { adminRequest } from './stack.js';
import { readSample, StackSampler } from './stack-signals.js';
import { stepSignals } from './step-signals.js';

/** Requests a user of the crowd makes, before the first step has measured it. */
const FIRST_GUESS_REQUESTS_PER_USER = 2.5;
/** A step starts this long after it is prepared (worker processes are forked in between). */
const STEP_LEAD_MS = { local: 100, workers: 2_000 };
/** The drill's crowd is sized for this long after the longest drill, and stopped when the drill ends. */
const DRILL_LOAD_MARGIN_MS = 10_000;
/** Switch flips of the drill (five switches, each there and back): its crowd's length. */
const DRILL_FLIPS = 10;
/** A step offering less than this share of its target says the generator (or the stack's latency) held it back. */
const OFFERED_SHARE = 0.8;

export interface StepReport extends StepSignals {
  label: string;
  /** ms since the sale's start. */
  startMs: number;
  gaveWay: GaveWay[];
  /** The step offered less than OFFERED_SHARE of its target. */
  underOffered: boolean;
}

export interface RampReport {
  plannedPeak: number;
  peakFactor: number;
  stepMs: number;
  limits: typeof LAYER_LIMITS;
  steps: StepReport[];
  verdict: LayerVerdict;
  /** The drill's load at the planned peak (not judged for the verdict: switches change what it meets). */
  drillPhase: StepReport | null;
}

export interface RampResult {
  ramp: RampReport;
  guard: GuardReport;
  drill: DrillReport | null;
  maxArrivalLagMs: number;
  /** Per-second samples of worker processes (the coordinator's are the monitor's). */
  workerSamples: LoadSample[][];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runRamp(args: {
  o: RehearsalOptions & { ramp: RampOptions };
  sale: Sale;
  rec: Recorder;
  monitor: LoadMonitor;
  watch: SettlementWatch;
  say: (line: string) => void;
}): Promise<RampResult> {
  const { o, sale, rec, monitor, watch, say } = args;
  const r = o.ramp;
  // Set from the sampler's callback and the steps: objects, so every reader sees the latest.
  const live: { crowd: Crowd | null; stopped: { reason: string; atMs: number } | null } = {
    crowd: null,
    stopped: null,
  };
  let baseline = 1;
  let measured: GuardReport['baseline'] = { rate: 1, source: 'assumed', answers: 0 };
  let guarding = false;
  const sampler = new StackSampler(
    () => readSample(sale.originUrl, sale.activityId, o.metricsToken),
    r.guard.everyMs,
    (latest) => {
      if (!guarding || live.stopped) return;
      const from = windowStart(sampler.samples, latest, r.guard.windowMs);
      const reason = from && guardTrip(r.guard, baseline, from, latest);
      if (!reason) return;
      live.stopped = { reason, atMs: latest.at - sale.startsAt };
      say(`guard: ${reason} — stopping the rehearsal`);
      live.crowd?.stop();
    },
  );
  const steps: StepReport[] = [];
  let drillPhase: StepReport | null = null;
  let drill: DrillReport | null = null;
  let perUser = FIRST_GUESS_REQUESTS_PER_USER;
  let nextUser = o.firstUserId;
  let maxArrivalLagMs = 0;
  const workerSamples: LoadSample[][] = [];
  const granted = (step?: Recorder) => rec.reservations.size + (step?.reservations.size ?? 0);
  const settledNow = async () => {
    await watch.probe().catch(() => undefined);
    return watch.last.orders + watch.last.dead;
  };

  /** One step: a crowd at `rate` for `ms`, started on a whole second after the sale's start. */
  const step = async (label: string, index: number, rate: number, ms: number, during?: (c: Crowd) => Promise<void>) => {
    const lead = o.workers > 1 ? STEP_LEAD_MS.workers : STEP_LEAD_MS.local;
    const shift = Math.max(0, Math.ceil((Date.now() + lead - rec.startsAt) / 1000));
    const startsAt = rec.startsAt + shift * 1000;
    const users = Math.max(1, Math.round((rate * ms) / 1000 / perUser));
    const stepRec = new Recorder(startsAt);
    const so = {
      ...o,
      users,
      curve: 'uniform' as const,
      durationMs: ms,
      leadMs: 0,
      firstUserId: nextUser,
      seed: o.seed + index,
      mix: { ...o.mix, early: 0 },
    };
    nextUser += users;
    const stepSale = { ...sale, startsAt, tailMs: 0 };
    const crowd =
      o.workers > 1 ? workerCrowd(so, stepSale, stepRec, monitor) : localCrowd(so, stepSale, stepRec, monitor);
    live.crowd = crowd;
    if (live.stopped) crowd.stop();
    await sleep(Math.max(0, startsAt - Date.now()));
    const before = await sampler.readNow().catch(() => null);
    const behindStart = granted() - (await settledNow());
    say(`${label}: ${Math.round(rate)} req/s for ${ms / 1000} s (${users} users)`);
    const running = crowd.run();
    try {
      // The drill's crowd runs as long as the drill does.
      if (during) await during(crowd);
    } finally {
      if (during) crowd.stop();
      await running;
    }
    live.crowd = null;
    const endedAt = Date.now();
    const after = await sampler.readNow().catch(() => null);
    const behindEnd = granted(stepRec) - (await settledNow());
    rec.merge(stepRec.toJSON(), shift);
    maxArrivalLagMs = Math.max(maxArrivalLagMs, crowd.maxArrivalLagMs);
    workerSamples.push(...crowd.generatorSamples.slice(1));
    if (stepRec.usersArrived > 0) perUser = Math.min(20, Math.max(1, stepRec.requests / stepRec.usersArrived));
    const signals = stepSignals({
      index,
      targetRate: rate,
      seconds: Math.max(0.001, (endedAt - startsAt) / 1000),
      plannedMs: ms,
      rec: stepRec,
      before,
      after,
      readings: sampler.between(startsAt, endedAt),
      admissionRate: o.admissionRate,
      behind: [behindStart, behindEnd],
    });
    const report: StepReport = {
      ...signals,
      label,
      startMs: startsAt - rec.startsAt,
      gaveWay: layersGivingWay(signals),
      underOffered: signals.offeredRate < rate * OFFERED_SHARE,
    };
    say(
      `${label}: offered ${Math.round(report.offeredRate)} req/s, served ${Math.round(report.servedRate)} req/s` +
        (report.gaveWay.length ? `; gave way: ${report.gaveWay.map((g) => g.layer).join(', ')}` : ''),
    );
    return report;
  };

  sampler.start();
  try {
    // The guard's baseline: the real traffic before the first step (or the given rate).
    await sleep(Math.max(0, sale.startsAt - Date.now()));
    const first = await sampler.readNow().catch(() => null);
    if (r.guard.baselineRate === null) await sleep(r.guard.baselineMs);
    measured = baselineOf(r.guard, first, await sampler.readNow().catch(() => null));
    baseline = measured.rate;
    guarding = true;
    for (let i = 1; i <= r.steps && !live.stopped; i++) {
      const rate = (r.plannedPeak * r.peakFactor * i) / r.steps;
      steps.push(await step(`step ${i}/${r.steps}`, i, rate, r.stepMs));
    }
    if (r.drill && !live.stopped) {
      const d = r.drill;
      const edge = new HttpClient(sale.edgeUrl, 16);
      try {
        drillPhase = await step(
          'drill',
          r.steps + 1,
          r.plannedPeak,
          DRILL_FLIPS * d.effectTimeoutMs + DRILL_LOAD_MARGIN_MS,
          async () => {
            drill = await runDrill(
              {
                activityId: sale.activityId,
                edge,
                admin: (method, path, body) => adminRequest(o, sale.originUrl, method, path, body),
                mint: tokenMinter(o.userTokenSecret, 3_600, true),
                firstProbeUser: nextUser + 1_000_000_000,
                rec,
                aborted: () => live.stopped !== null,
              },
              d,
            );
          },
        );
      } finally {
        edge.close();
      }
    }
  } finally {
    guarding = false;
    live.crowd?.stop();
    await sampler.stop();
  }
  const finalStop = live.stopped;
  return {
    ramp: {
      plannedPeak: r.plannedPeak,
      peakFactor: r.peakFactor,
      stepMs: r.stepMs,
      limits: LAYER_LIMITS,
      steps,
      verdict: firstToGiveWay(steps),
      drillPhase,
    },
    guard: {
      baseline: measured,
      stoppedEarly: finalStop !== null,
      reason: finalStop?.reason ?? null,
      atMs: finalStop?.atMs ?? null,
      limits: r.guard,
      readFailures: sampler.readFailures,
    },
    drill,
    maxArrivalLagMs,
    workerSamples,
  };
}
