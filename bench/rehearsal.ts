/**
 * The sale rehearsal (`npm run rehearsal`, DESIGN §7): a realistic crowd — up to millions of
 * distinct users, most clicking once at the start, some retrying, bots, early birds, forged and
 * shared tickets, pollers and payers — driven through the edge over HTTP, then settlement and
 * reconciliation, a funnel, latency percentiles, report.json and report.html. Exits non-zero when
 * anything is oversold, lost or unreconciled.
 *
 *   npm run rehearsal -- --users 1000000 --stock 100000 --curve spike --duration 60
 *   npm run rehearsal -- --help
 */
import { resolve } from 'node:path';
import { HttpClient } from './rehearsal/client.js';
import { Driver } from './rehearsal/driver.js';
import { tokenMinter } from './rehearsal/jwt.js';
import { parseOptions, type RehearsalOptions } from './rehearsal/options.js';
import { Population } from './rehearsal/population.js';
import { Recorder } from './rehearsal/recorder.js';
import { buildReport, printReport, writeReport, type Report } from './rehearsal/report.js';
import { openPool, settle, SettlementWatch } from './rehearsal/settlement.js';
import { adminRequest, createSale, startStack } from './rehearsal/stack.js';

/** Follow-ups (repeats, polls) are not scheduled beyond this long after the last user arrived. */
const TAIL_MS = 30_000;

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

export async function runRehearsal(o: RehearsalOptions, command: string): Promise<Report> {
  const startedAt = Date.now();
  const stack = await startStack(o);
  const edge = new HttpClient(stack.edgeUrl, o.concurrency);
  const origin = new HttpClient(stack.originUrl, 16);
  const progress = progressLine(o.progress);
  const pool = openPool(o);
  try {
    const { activityId, startsAt } = await createSale(o, stack.originUrl, stack.edgeUrl);
    const rec = new Recorder(startsAt);
    const population = new Population({
      users: o.users,
      seed: o.seed,
      firstUserId: o.firstUserId,
      curve: o.curve,
      durationMs: o.durationMs,
      leadMs: o.leadMs,
      mix: o.mix,
    });
    const driver = new Driver(
      {
        activityId,
        startsAt,
        population,
        concurrency: o.concurrency,
        pollRatio: o.pollRatio,
        payRatio: o.payRatio,
        tailMs: TAIL_MS,
        paymentSecret: o.paymentSecret,
      },
      edge,
      origin,
      rec,
      // Tokens outlive any rehearsal: the arrival window, a generator far behind it, the tail.
      tokenMinter(o.userTokenSecret, Math.ceil(o.durationMs / 1000) * 4 + 3_600),
    );

    const watch = new SettlementWatch(pool, stack.originUrl, activityId, rec);
    watch.start();
    let prev = { at: Date.now(), requests: 0 };
    const ticker = setInterval(() => {
      const now = Date.now();
      const rate = ((rec.requests - prev.requests) * 1000) / Math.max(1, now - prev.at);
      prev = { at: now, requests: rec.requests };
      const t = (now - startsAt) / 1000;
      progress.show(
        `[${t >= 0 ? ' ' : ''}${t.toFixed(1)}s] requests ${rec.requests.toLocaleString('en-US')} · ${Math.round(rate).toLocaleString('en-US')} req/s · users ${rec.usersArrived.toLocaleString('en-US')}/${o.users.toLocaleString('en-US')} · reserved ${rec.reservations.size.toLocaleString('en-US')}/${o.stock.toLocaleString('en-US')}${rec.firstSoldOutAt !== null ? ' · SOLD OUT' : ''} · lag ${(driver.arrivalLagMs / 1000).toFixed(1)}s`,
      );
    }, 250);
    try {
      await driver.run();
    } finally {
      clearInterval(ticker);
      progress.done();
    }
    const loadEndedAt = Date.now();

    const facts = await settle(o, stack.originUrl, activityId, rec, watch, pool, (what) => progress.show(what));
    progress.done();
    if (stack.own) await endSale(o, stack.originUrl, activityId);
    const report = buildReport({
      o,
      command,
      startedAt,
      activityId,
      saleStartsAt: startsAt,
      stack: { own: stack.own, edgeUrl: stack.edgeUrl, originUrl: stack.originUrl },
      rec,
      maxArrivalLagMs: driver.maxArrivalLagMs,
      loadEndedAt,
      facts,
      settledSamples: watch.samples,
    });
    return report;
  } finally {
    await pool.end();
    edge.close();
    origin.close();
    await stack.stop();
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
  process.exit(report.verdict.ok ? 0 : 1);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
