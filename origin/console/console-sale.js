// @ts-check
// One sale on one screen, read again every REFRESH_MS: the console's live view
// (`/admin/console/api/sales/:id/live`) and the admin API's own answers — warm-up verification,
// reconciliation, dead letters, parked order events — and, once the sale has ended, the cleanup
// checklist. Per-second rates come from successive readings of the origin's running totals.
import { api, ApiError } from './console-api.js';
import { $, NA, clock, h, num, pct, rate, replaceRows, setText, timeOf } from './console-dom.js';
import { buildSwitches, lastChange, showCurrent } from './console-switches.js';
import { clearAlerts, showAlerts } from './console-alerts.js';
import { destroyCharts, drawCharts } from './console-charts.js';

/** The issue asks for at least one refresh a second. */
const REFRESH_MS = 1_000;
const COUNTDOWN_TICK_MS = 250;

/**
 * The sale on screen, or null.
 * @type {{ activityId: string, timer: number, ticker: number, previous: any, live: any, offsetMs: number, act?: (what: string, call: () => Promise<any>, versionOf?: (answer: any) => number) => void } | null}
 */
let current = null;

export function showSale(activityId) {
  hideSale();
  $('sale-view').hidden = false;
  setText($('sale-title'), `Sale ${activityId}`);
  for (const id of ['report', 'checklist']) $(id).replaceChildren();
  setText($('action-result'), '');
  setText($('edge-applied'), '');
  current = { activityId, timer: 0, ticker: 0, previous: null, live: null, offsetMs: 0 };
  Object.assign(lastChange, { what: '', version: 0, at: 0 });
  current.act = buildSwitches(activityId, () => void poll()).act;
  $('read-report').onclick = () => void readReport(activityId);
  current.ticker = setInterval(tickCountdown, COUNTDOWN_TICK_MS);
  void poll();
}

export function hideSale() {
  if (current) {
    clearTimeout(current.timer);
    clearInterval(current.ticker);
  }
  current = null;
  destroyCharts();
  clearAlerts();
  $('sale-view').hidden = true;
}

async function poll() {
  const mine = current;
  if (!mine) return;
  clearTimeout(mine.timer);
  const started = Date.now();
  const id = mine.activityId;
  const [live, warmup, rec, dead, parked] = await Promise.allSettled([
    api('GET', `/admin/console/api/sales/${id}/live`),
    api('GET', `/admin/activities/${id}/warmup`),
    api('GET', `/admin/activities/${id}/reconciliation`),
    api('GET', `/admin/activities/${id}/dead-letters`),
    api('GET', '/admin/order-events?status=parked&limit=500'),
  ]);
  if (current !== mine) return;
  if (live.status === 'fulfilled') showLive(live.value);
  else showFailure(live.reason);
  if (warmup.status === 'fulfilled') showWarmup(warmup.value);
  if (rec.status === 'fulfilled') showReconciliation(rec.value);
  if (dead.status === 'fulfilled') showDeadLetters(dead.value.deadLetters);
  if (parked.status === 'fulfilled') showParked(parked.value.events.filter((e) => e.activityId === id));
  if (live.status === 'fulfilled') {
    showAlerts(live.value.alerts, warmup.status === 'fulfilled' ? warmup.value : null);
    drawCharts(live.value);
  }
  if (live.status === 'fulfilled' && live.value.publicState === 'ended') {
    const list = await api('GET', `/admin/console/api/sales/${id}/cleanup-checklist`).catch(() => null);
    if (list && current === mine) showChecklist(list);
  }
  if (current === mine) mine.timer = setTimeout(poll, Math.max(0, REFRESH_MS - (Date.now() - started)));
}

function showFailure(err) {
  if (err instanceof ApiError && err.status === 401) return;
  setText($('edge-applied'), `Could not read the sale: ${err.message}`);
}

function showLive(live) {
  const at = Date.parse(live.serverTime);
  current.offsetMs = at - Date.now();
  const before = current.previous;
  current.previous = { at, live };
  current.live = live;
  const seconds = before ? (at - before.at) / 1000 : 0;
  const perSecond = (pick) => (before ? rate(pick(live), pick(before.live), seconds) : null);

  // A shadow sale (a rehearsal on the production stack) says so in its title.
  setText($('sale-title'), `${live.shadow ? '[SHADOW rehearsal] ' : ''}${live.config.title} (${live.activityId})`);
  badge($('sale-state'), 'state', live.state);
  badge($('sale-public-state'), 'public', live.publicState);
  badge(
    $('sale-failover'),
    'failover',
    live.failover.closed ? `closed by failover since ${timeOf(live.failover.since)}` : 'no failover',
  );
  $('sale-failover').dataset.closed = String(live.failover.closed);
  tickCountdown();
  showEdge(live);
  showCurrent(live);

  // The five signals (the seeds): success rate, Redis, the queue's growth, MySQL, GC.
  const s = live.signals;
  const answered = perSecond((l) => l.signals.orderAnswers.total);
  const decided = perSecond((l) => l.signals.orderAnswers.decided);
  const backlog = (l) => (l.signals.stream.pending === null ? null : l.signals.stream.pending + l.signals.stream.lag);
  const gcMsPerSec = perSecond((l) =>
    l.signals.runtime.gcSeconds === null ? null : l.signals.runtime.gcSeconds * 1000,
  );
  signals([
    [
      'Order success rate',
      answered
        ? pct(decided, answered)
        : s.orderAnswers.total === null
          ? NA
          : `— (no answers; all time ${pct(s.orderAnswers.decided, s.orderAnswers.total)})`,
    ],
    [
      'Redis slow log',
      `${num(
        perSecond((l) => l.signals.redis.slowlogEntries),
        1,
      )} new/s · ${num(s.redis.slowlogEntries)} total`,
    ],
    ['Redis clients', num(s.redis.connectedClients)],
    [
      'Queue backlog',
      `${num(backlog(live))} (${num(s.stream.pending)} pending, ${num(s.stream.lag)} undelivered) · growing ${num(perSecond(backlog), 1)}/s`,
    ],
    [
      'MySQL threads',
      `${num(s.mysql.threadsRunning)} running / ${num(s.mysql.threadsConnected)} connected · slow queries ${num(
        perSecond((l) => l.signals.mysql.slowQueries),
        1,
      )}/s`,
    ],
    [
      'Event loop p99',
      s.runtime.eventLoopLagP99Seconds === null ? NA : `${num(s.runtime.eventLoopLagP99Seconds * 1000, 1)} ms`,
    ],
    [
      'GC',
      `${num(gcMsPerSec, 1)} ms/s · ${num(
        perSecond((l) => l.signals.runtime.gcCount),
        1,
      )} pauses/s`,
    ],
  ]);

  const steps = ['clicks', 'tickets', 'admitted', 'reserved', 'settled', 'paid'];
  replaceRows(
    $('funnel').tBodies[0],
    steps.map((step) =>
      h(
        'tr',
        { dataset: { step } },
        h('th', { scope: 'row' }, step),
        h(
          'td',
          { class: 'n' },
          num(
            perSecond((l) => l.funnel[step]),
            1,
          ),
        ),
        h('td', { class: 'n' }, num(live.funnel[step])),
      ),
    ),
  );

  const units = live.units;
  definitions($('stock-figures'), [
    [
      'Units left (Redis)',
      live.redis.error
        ? `unknown: Redis did not answer (${live.redis.error})`
        : units
          ? `${num(units.left)} of ${num(units.onSale)} on sale`
          : 'not warm',
    ],
    ['Held back', num(live.stock.heldBack)],
    ['Available (MySQL)', num(live.stock.available)],
    ['Waiting line', live.waitingLine === null ? NA : num(live.waitingLine)],
    ['Warm-up', live.warmupStatus],
  ]);
  replaceRows(
    $('buckets').tBodies[0],
    live.buckets.map((b) =>
      h(
        'tr',
        {},
        h('th', { scope: 'row' }, String(b.bucket)),
        h('td', { class: 'n' }, b.units === null ? 'not warm' : num(b.units)),
      ),
    ),
  );
}

function badge(el, kind, text) {
  setText(el, text);
  el.dataset[kind] = text;
}

/** Whether the edge serves the origin's current version, and how long after the last change here it did. */
function showEdge(live) {
  const el = $('edge-applied');
  const e = live.edge;
  el.dataset.applied = String(e.kind === 'seen' && e.version === e.originVersion);
  if (e.kind === 'none')
    return setText(el, 'No edge configured (EDGE_URL unset): changes cannot be confirmed at the edge.');
  if (e.kind === 'failed') return setText(el, `The edge could not be asked: ${e.error}`);
  el.dataset.version = String(e.version);
  el.dataset.stockHint = e.stockHint ?? '';
  const hint = e.stockHint ? `, stock hint ${e.stockHint}` : '';
  if (e.version !== e.originVersion)
    return setText(el, `Waiting for the edge: it serves version ${e.version}, the origin is at ${e.originVersion}.`);
  let applied = `Edge serves version ${e.version} (${e.state}${hint}).`;
  if (lastChange.version && e.version >= lastChange.version) {
    applied = `Edge applied version ${e.version} (${e.state}${hint}), ${((Date.parse(e.at) - lastChange.at) / 1000).toFixed(1)} s after “${lastChange.what}”.`;
  }
  setText(el, applied);
}

function definitions(dl, pairs) {
  const rows = pairs.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]);
  if (dl.childElementCount !== rows.length) return dl.replaceChildren(...rows);
  rows.forEach((row, i) => setText(dl.children[i], row.textContent)); // only changed text is announced
}

const signals = (pairs) => definitions($('signals'), pairs);

function tickCountdown() {
  const live = current && current.live;
  if (!live) return;
  const now = Date.now() + current.offsetMs;
  const starts = Date.parse(live.config.startsAt);
  const ends = Date.parse(live.config.endsAt);
  const [label, to] =
    live.publicState === 'ended' ? ['Ended', null] : now < starts ? ['Starts in', starts] : ['Ends in', ends];
  setText($('countdown-label'), label);
  setText($('countdown'), to === null ? '--:--:--' : clock(to - now));
}

function showWarmup(w) {
  const el = $('warmup-status');
  el.dataset.ok = String(w.ok);
  setText(el, w.ok ? `Verified at ${timeOf(w.at)}: Redis matches MySQL.` : `Not right (${timeOf(w.at)}):`);
  replaceRows(
    $('warmup-problems'),
    w.checks
      .filter((c) => !c.ok)
      .map((c) => h('li', {}, `${c.name}: expected ${c.expected ?? 'nothing'}, found ${c.actual ?? 'nothing'}`)),
  );
}

function showReconciliation(rec) {
  const el = $('rec-status');
  el.dataset.ok = String(rec.ok);
  setText(el, rec.ok ? `Clean at ${timeOf(rec.at)}: every equation holds.` : `MISMATCH at ${timeOf(rec.at)}`);
  replaceRows(
    $('rec-checks').tBodies[0],
    rec.checks.map((c) =>
      h(
        'tr',
        { class: c.ok ? '' : 'bad' },
        h('th', { scope: 'row' }, c.name),
        h('td', { class: 'n' }, (c.rule === 'at_most' ? '≤ ' : '') + num(c.expected)),
        h('td', { class: 'n' }, num(c.actual)),
        h('td', {}, c.ok ? 'yes' : 'NO'),
      ),
    ),
  );
}

function showDeadLetters(list) {
  replaceRows(
    $('dead-letters').tBodies[0],
    list.length === 0
      ? [h('tr', {}, h('td', { colspan: 6 }, 'None.'))]
      : list.map((d) => {
          const open = d.status === 'open';
          const retry = h('button', { type: 'button', disabled: !open }, 'Retry');
          const giveUp = h(
            'button',
            { type: 'button', class: 'danger', disabled: d.status === 'given_up' || d.status === 'retried' },
            'Compensate (give up)',
          );
          const rid = encodeURIComponent(d.reservationId);
          retry.addEventListener('click', () =>
            current.act(`Retry settlement of ${d.reservationId}`, () =>
              api('POST', `/admin/dead-letters/${rid}/retry`),
            ),
          );
          giveUp.addEventListener('click', () =>
            current.act(`Give up ${d.reservationId} and return its units`, () =>
              api('POST', `/admin/dead-letters/${rid}/give-up`),
            ),
          );
          return h(
            'tr',
            {},
            h('th', { scope: 'row' }, d.reservationId),
            h('td', {}, d.userId),
            h('td', { class: 'n' }, num(d.quantity)),
            h('td', {}, d.reason),
            h('td', {}, d.status),
            h('td', {}, retry, ' ', giveUp),
          );
        }),
  );
}

function showParked(list) {
  replaceRows(
    $('parked').tBodies[0],
    list.length === 0
      ? [h('tr', {}, h('td', { colspan: 4 }, 'None.'))]
      : list.map((e) => {
          const retry = h('button', { type: 'button' }, 'Send again');
          retry.addEventListener('click', () =>
            current.act(`Send order event ${e.id} again`, () =>
              api('POST', `/admin/order-events/${encodeURIComponent(e.id)}/retry`),
            ),
          );
          return h(
            'tr',
            {},
            h('th', { scope: 'row' }, e.id),
            h('td', { class: 'n' }, num(e.attempts)),
            h('td', {}, e.lastError ?? ''),
            h('td', {}, retry),
          );
        }),
  );
}

function showChecklist(list) {
  const ul = $('checklist');
  ul.dataset.done = String(list.done);
  const items = list.items.map((i) =>
    h(
      'li',
      { dataset: { item: i.id, ok: String(i.ok) } },
      h('input', {
        type: 'checkbox',
        id: `check-${i.id}`,
        disabled: true,
        checked: i.ok,
        'aria-describedby': `check-${i.id}-detail`,
      }),
      ' ',
      h('label', { for: `check-${i.id}` }, i.label),
      ' ',
      h('span', { id: `check-${i.id}-detail`, class: 'detail' }, `— ${i.detail}`),
    ),
  );
  // Redrawn only when something changed, so the live region announces changes, not every second.
  const key = JSON.stringify(list.items);
  if (ul.dataset.key !== key) {
    ul.dataset.key = key;
    ul.replaceChildren(...items);
  }
}

async function readReport(activityId) {
  const box = $('report');
  try {
    const r = await api('GET', `/admin/console/api/sales/${activityId}/report`);
    const dead =
      Object.entries(r.deadLetters)
        .map(([s, n]) => `${n} ${s}`)
        .join(', ') || 'none';
    const dl = h('dl', { id: 'report-figures' });
    definitions(dl, [
      ['Reconciliation', r.reconciliation.ok ? 'clean' : 'MISMATCH'],
      [
        'Orders',
        `${r.orders.total} (${r.orders.paid} paid, ${r.orders.pending} awaiting payment, ${r.orders.timeout} timed out)`,
      ],
      ['Refills', `${r.refills.logged} logged, ${r.refills.applied} applied, ${r.refills.pending} pending`],
      ['Dead letters', dead],
      ['Refunds needed', String(r.refundsNeeded)],
      ['Tranches', `${r.tranches.applied} released, ${r.tranches.pending} pending, ${r.tranches.heldBack} held back`],
      ['Warm-up', r.warmupStatus ?? NA],
    ]);
    const raw = h(
      'details',
      {},
      h('summary', {}, 'The full report (as npm run report prints it)'),
      h('pre', {}, JSON.stringify(r, null, 2)),
    );
    box.replaceChildren(dl, raw);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    box.replaceChildren(h('p', { class: 'error' }, `The report could not be read: ${err.message}`));
  }
}
