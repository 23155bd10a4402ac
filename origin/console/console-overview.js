// @ts-check
// The sales overview (docs/console.md, "Sales overview"): one card for every live or upcoming sale
// of the sales list, with its state, units left, recent success rate, a sparkline of reservations
// per second over the last two minutes and its alerts in words.
import { sparkline } from './console-charts.js';
import { h, num, setText } from './console-dom.js';

/**
 * The element with this id (the page always has it).
 * @param {string} id
 * @returns {HTMLElement}
 */
function byId(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the console page has no #${id}`);
  return found;
}

/**
 * @typedef {object} SaleRow a row of `GET /admin/console/api/sales`
 * @property {string} activityId
 * @property {string} title
 * @property {string} state
 * @property {string | null} publicState
 * @property {number} stock
 * @property {number | null} left
 * @property {number | null} successRate
 * @property {number} successRateWindowSeconds the window successRate is over
 * @property {(number | null)[]} spark
 * @property {{ id: string, level: string, title: string }[]} alerts
 */

/** @param {(number | null)[]} values */
function peak(values) {
  const known = values.filter((v) => v !== null).map(Number);
  return known.length ? Math.max(...known) : null;
}

/** @param {SaleRow} s */
function card(s) {
  const canvas = /** @type {HTMLCanvasElement} */ (
    h('canvas', {
      class: 'spark',
      role: 'img',
      'aria-label': `Reservations per second, last two minutes: peak ${num(peak(s.spark), 1)}/s, now ${num(
        s.spark.length ? s.spark[s.spark.length - 1] : null,
        1,
      )}/s`,
    })
  );
  const alerts = s.alerts ?? [];
  const el = h(
    'li',
    {
      class: 'sale-card',
      dataset: { activity: s.activityId, public: s.publicState ?? '', alerts: String(alerts.length) },
    },
    h('h3', {}, h('a', { href: `#/sale/${s.activityId}` }, `${s.title} (${s.activityId})`)),
    h(
      'dl',
      {},
      h('dt', {}, 'State'),
      h('dd', { class: 'card-state' }, `${s.publicState ?? 'n/a'} (switch ${s.state})`),
      h('dt', {}, 'Units left'),
      h('dd', { class: 'card-left' }, s.left === null ? 'not warm' : `${num(s.left)} of ${num(s.stock)}`),
      h('dt', {}, 'Success rate'),
      h(
        'dd',
        { class: 'card-rate' },
        s.successRate === null
          ? `no answers in the last ${s.successRateWindowSeconds} s`
          : `${num(s.successRate * 100, 1)} % (last ${s.successRateWindowSeconds} s)`,
      ),
      h('dt', {}, 'Reserved /s'),
      h('dd', {}, canvas),
      h('dt', {}, 'Alerts'),
      h(
        'dd',
        { class: 'card-alerts', dataset: { ok: String(alerts.length === 0) } },
        alerts.length === 0 ? 'none' : alerts.map((a) => a.title).join(' '),
      ),
    ),
  );
  return { el, canvas, spark: s.spark };
}

/**
 * Shows the live and upcoming sales of the list as cards.
 * @param {SaleRow[]} sales
 */
export function showOverview(sales) {
  const live = sales.filter((s) => s.publicState !== null && s.publicState !== 'ended');
  const list = byId('overview');
  setText(
    byId('overview-note'),
    live.length === 0
      ? 'No sale is live or upcoming.'
      : `${live.length} live or upcoming ${live.length === 1 ? 'sale' : 'sales'}.`,
  );
  const cards = live.map(card);
  list.replaceChildren(...cards.map((c) => c.el));
  for (const c of cards) sparkline(c.canvas, c.spark);
}
