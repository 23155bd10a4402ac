/**
 * The sale rehearsal (`npm run rehearsal`, docs/design.md §7): a realistic crowd — up to millions of
 * distinct users, most clicking once at the start, some retrying, bots, early birds, forged and
 * shared tickets, pollers and payers — driven through the edge over HTTP, then settlement and
 * reconciliation, a funnel, latency percentiles, report.json and report.html. Exits non-zero when
 * anything is oversold, lost or unreconciled.
 *
 *   npm run rehearsal -- --users 1000000 --stock 100000 --curve spike --duration 60 --workers 4 --concurrency 1024
 *   npm run rehearsal -- --help
 */
import { resolve } from 'node:path';
import { ROOT } from '../support/processes.js';
import { readOrderAnswers, successBetween, writeBaseline } from './rehearsal/baseline.js';
import { localCrowd, workerCrowd, type Crowd } from './rehearsal/crowd.js';
import { LoadMonitor, type LoadSample } from './rehearsal/monitor.js';
import { awaitDraw } from './rehearsal/lottery.js';
import { parseOptions, type RehearsalOptions } from './rehearsal/options.js';
import { Recorder } from './rehearsal/recorder.js';
import { runRamp } from './rehearsal/ramp.js';
import { buildReport, printReport, writeReport, type Report } from './rehearsal/report.js';
import type { ShadowRun } from './rehearsal/report-shape.js';
import { cleanUpShadowSale, stopSale } from './rehearsal/shadow-end.js';
import { openPool, settle, SettlementWatch } from './rehearsal/settlement.js';
import { ledgerOf } from '../origin/orders/ledger.js';
import { adminRequest, createSale, startStack } from './rehearsal/stack.js';
import { CpuMeter, measureHello } from './rehearsal/stack-cost.js';

function progressLine(enabled: boolean) {
  let last = '';
  return {
    show(text: string) {
      if (!enabled) return;
      const line = text.length > 150 ? text.slice(0, 150) : text;
      process.stderr.write(`\r${line.padEnd(last.length)}`);
      last = line;
    },
    done() {
      if (enabled && last) process.stderr.write('\n');
      last = '';
    },
  };
}

/** `say`: where the shadow ramp's step and guard lines go (default: stdout). */
export async function runRehearsal(
  o: RehearsalOptions,
  command: string,
  opts: { say?: (line: string) => void } = {},
): Promise<Report> {
  const startedAt = Date.now();
  const stack = await startStack(o);
  const progress = progressLine(o.progress);
  const pool = openPool(o);
  let monitor: LoadMonitor | null = null;
  try {
    const { activityId, startsAt } = await createSale(o, stack.originUrl, stack.edgeUrl);
    const rec = new Recorder(startsAt);
    // The coordinator watches itself and the stack's processes; each worker watches itself.
    monitor = new LoadMonitor(startsAt, () => stack.pids());
    monitor.start();
    const sale = { activityId, startsAt, edgeUrl: stack.edgeUrl, originUrl: stack.originUrl };
    // The order endpoint's answers before the crowd: the success rate is measured over the rehearsal alone.
    const answersBefore = await readOrderAnswers(stack.originUrl, o.metricsToken).catch(() => null);
    const watch = new SettlementWatch(pool, stack.originUrl, activityId, rec, ledgerOf(o), o.metricsToken);
    watch.start();
    // Our own stack's CPU per unit of work (an existing stack's processes are not ours to read).
    const edgeMeter = new CpuMeter(() => stack.pids()['edge (workerd)'] ?? []).start();
    const originMeter = new CpuMeter(() => stack.pids().origin ?? []).start();
    let shadowRun: ShadowRun | null = null;
    let load: { maxArrivalLagMs: number; generators: LoadSample[][] };
    if (o.ramp) {
      const say = opts.say ?? ((line: string) => console.log(line));
      // A ramp that fails still stops its shadow sale: nothing of it may stay open on a production stack.
      const ramp = await runRamp({ o: { ...o, ramp: o.ramp }, sale, rec, monitor, watch, say }).catch(
        async (err: unknown) => {
          await stopSale(o, stack.originUrl, activityId).catch(() => undefined);
          throw err;
        },
      );
      shadowRun = { ramp: ramp.ramp, guard: ramp.guard, drill: ramp.drill, cleanup: null };
      load = { maxArrivalLagMs: ramp.maxArrivalLagMs, generators: [monitor.samples, ...ramp.workerSamples] };
      // Stopped before settlement is awaited: nothing new can be reserved while it drains.
      await stopSale(o, stack.originUrl, activityId);
    } else {
      const crowd = o.workers > 1 ? workerCrowd(o, sale, rec, monitor) : localCrowd(o, sale, rec, monitor);
      await driveWithProgress(crowd, o, rec, startsAt, progress);
      load = { maxArrivalLagMs: crowd.maxArrivalLagMs, generators: crowd.generatorSamples };
    }
    const loadEndedAt = Date.now();
    const edgeCpuMs = edgeMeter.elapsedMs();
    const answersAfter = answersBefore && (await readOrderAnswers(stack.originUrl, o.metricsToken).catch(() => null));
    const orderSuccess = answersBefore && answersAfter ? successBetween(answersBefore, answersAfter) : null;
    const lottery = o.admission === 'lottery' ? await awaitDraw(stack.edgeUrl, activityId, rec) : null;

    const facts = await settle(o, stack.originUrl, activityId, rec, watch, pool, (what) => progress.show(what));
    const originCpuMs = originMeter.elapsedMs();
    progress.done();
    const hello =
      stack.own && o.helloSeconds > 0
        ? await measureHello({ seconds: o.helloSeconds, connections: o.concurrency, direct: o.edgeEntry === 'direct' })
        : null;
    if (lottery)
      console.log(
        `lottery: ${lottery.entrants} entrants (${rec.entered} entries answered 202), ${lottery.winners} winners ` +
          `(${lottery.unitsWon} units), time to draw ${lottery.drawMs} ms after the window closed`,
      );
    if (shadowRun) shadowRun.cleanup = await cleanUpShadowSale(o, stack.originUrl, pool, activityId);
    else if (stack.own) await endSale(o, stack.originUrl, activityId);
    const report = buildReport({
      o,
      command,
      startedAt,
      activityId,
      saleStartsAt: startsAt,
      stack: { own: stack.own, edgeUrl: stack.edgeUrl, originUrl: stack.originUrl },
      rec,
      maxArrivalLagMs: load.maxArrivalLagMs,
      loadEndedAt,
      facts,
      settledSamples: watch.samples,
      generators: load.generators,
      orderSuccess,
      shadowRun,
      cpu: stack.own ? { edgeCpuMs, originCpuMs, hello } : null,
    });
    return report;
  } finally {
    monitor?.stop();
    await pool.end();
    await stack.stop();
  }
}

/** One crowd with the live progress line (the ramp prints a line per step instead). */
async function driveWithProgress(
  crowd: Crowd,
  o: RehearsalOptions,
  rec: Recorder,
  startsAt: number,
  progress: ReturnType<typeof progressLine>,
): Promise<void> {
  let prev = { at: Date.now(), requests: 0 };
  const ticker = setInterval(() => {
    const now = Date.now();
    const requests = crowd.requests;
    const rate = ((requests - prev.requests) * 1000) / Math.max(1, now - prev.at);
    prev = { at: now, requests };
    const t = (now - startsAt) / 1000;
    progress.show(
      `[${t >= 0 ? ' ' : ''}${t.toFixed(1)}s] requests ${requests.toLocaleString('en-US')} · ${Math.round(rate).toLocaleString('en-US')} req/s · users ${crowd.usersArrived.toLocaleString('en-US')}/${o.users.toLocaleString('en-US')} · reserved ${rec.reservations.size.toLocaleString('en-US')}/${o.stock.toLocaleString('en-US')} · lag ${(crowd.arrivalLagMs / 1000).toFixed(1)}s`,
    );
  }, 250);
  try {
    await crowd.run();
  } finally {
    clearInterval(ticker);
    progress.done();
  }
}

/**
 * Our own sale is over: stop it, and clean it up (Redis keys expire, consumers forget it) when the
 * origin agrees — it refuses while orders still wait for payment, which is normal with a long timeout.
 */
async function endSale(o: RehearsalOptions, originUrl: string, activityId: string): Promise<void> {
  await adminRequest(o, originUrl, 'PATCH', `/admin/activities/${activityId}`, { state: 'stopped' });
  await adminRequest(o, originUrl, 'POST', `/admin/activities/${activityId}/cleanup`).catch(() => undefined);
}

/**
 * A passing rehearsal's order success rate becomes the alerts' baseline (ops/prometheus/baseline.yml
 * by default); a failing one, or one that measured nothing, leaves the baseline as it was.
 */
function recordBaseline(o: RehearsalOptions, report: Report): void {
  if (!o.baselinePath) return;
  const rate = report.orderSuccess?.rate ?? null;
  if (!report.verdict.ok || rate === null) {
    console.log(`baseline: not written (${rate === null ? 'no order answers measured' : 'the rehearsal failed'})`);
    return;
  }
  const path = resolve(ROOT, o.baselinePath);
  writeBaseline(path, rate, {
    measuredAt: report.startedAt,
    answers: report.orderSuccess!.total,
    users: o.users,
    stock: o.stock,
    curve: o.curve,
  });
  console.log(`baseline: order success rate ${(rate * 100).toFixed(2)} % written to ${path}`);
}

/**
 * 0: all well; 1: oversold, lost or unreconciled, a switch of the drill slow or without effect, or
 * the shadow sale not cleaned up; 3: the guard stopped a shadow ramp because the real traffic degraded.
 */
export function exitCode(report: Report): number {
  const run = report.shadowRun;
  if (run?.guard.stoppedEarly) return 3;
  const drillOk = !run?.drill || run.drill.ok;
  const cleanOk = !run?.cleanup || run.cleanup.done;
  return report.verdict.ok && drillOk && cleanOk ? 0 : 1;
}

async function main() {
  let o: RehearsalOptions;
  try {
    o = parseOptions(process.argv.slice(2));
    if (o.edgeUrl && (!o.adminToken || !o.userTokenSecret || !o.paymentSecret))
      throw new Error(
        'an existing stack needs ADMIN_TOKEN, USER_TOKEN_SECRET and PAYMENT_WEBHOOK_SECRET in the environment',
      );
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
  const command = `npm run rehearsal -- ${process.argv.slice(2).join(' ')}`.trim();
  const report = await runRehearsal(o, command);
  printReport(report);
  const files = writeReport(report, resolve(o.outDir));
  console.log(`\nreport: ${files.html}\n        ${files.json}`);
  recordBaseline(o, report);
  process.exit(exitCode(report));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
