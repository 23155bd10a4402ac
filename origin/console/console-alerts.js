// @ts-check
// The sale view's alert banners (docs/console.md, "Alerts"): every failure the origin knows of for
// the sale (`live.alerts`, origin/console/sale-alerts.ts), plus the warm-up verification the page
// reads itself each second when it fails. Each banner says its level in words (never colour alone),
// what happened, since when, the next step, and the docs section (a link when the origin's
// CONSOLE_DOCS_URL is set). Banners are redrawn only when their text changes, so the live region
// announces changes, not every second.
import { h, replaceRows, timeOf } from './console-dom.js';

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
 * @typedef {object} Alert
 * @property {string} id
 * @property {'critical' | 'warning' | 'notice'} level
 * @property {string} title
 * @property {string | null} since ISO time
 * @property {string} next
 * @property {{ file: string, section: string, anchor: string }} docs
 * @property {string | null} [docsUrl]
 */
/**
 * @typedef {object} WarmupAnswer `GET /admin/activities/:id/warmup`
 * @property {boolean} ok
 * @property {string} at
 * @property {{ name: string, ok: boolean, expected: unknown, actual: unknown }[]} checks
 */

const LEVEL_WORDS = { critical: 'Critical', warning: 'Needs an operator', notice: 'Notice' };

/** When this page first saw the warm-up check fail (the answer itself has no such time). */
let warmupFailingSince = /** @type {string | null} */ (null);

/**
 * The warm-up banner from the page's own reading, unless the origin already reports one.
 * @param {Alert[]} alerts
 * @param {WarmupAnswer | null} warmup
 * @returns {Alert[]}
 */
function withWarmup(alerts, warmup) {
  if (!warmup || warmup.ok) {
    warmupFailingSince = null;
    return alerts;
  }
  warmupFailingSince ??= warmup.at;
  if (alerts.some((a) => a.id === 'warmup')) return alerts;
  const failing = warmup.checks.filter((c) => !c.ok).map((c) => c.name);
  return [
    ...alerts,
    {
      id: 'warmup',
      level: 'critical',
      title: `Warm-up verification failing: Redis does not match MySQL (${failing.join(', ')}).`,
      since: warmupFailingSince,
      next: 'See each failing check in Warm-up verification below; warm up again (Warm up now) before selling on it.',
      docs: { file: 'docs/console.md', section: 'Warm-up verification failed', anchor: 'warm-up-verification-failed' },
      docsUrl: null,
    },
  ];
}

/** @param {Alert} a */
function banner(a) {
  const docsText = `${a.docs.file}, “${a.docs.section}”`;
  return h(
    'div',
    { class: 'alert', dataset: { alert: a.id, level: a.level } },
    h('p', { class: 'alert-title' }, h('strong', {}, `${LEVEL_WORDS[a.level]}: `), a.title),
    h(
      'p',
      { class: 'alert-more' },
      a.since ? `Since ${timeOf(a.since)}. ` : '',
      h('strong', {}, 'Next: '),
      a.next,
      ' ',
      a.docsUrl
        ? h('a', { href: a.docsUrl, rel: 'noreferrer', target: '_blank' }, `Docs: ${docsText}`)
        : `Docs: ${docsText}.`,
    ),
  );
}

/**
 * Shows the sale's banners.
 * @param {Alert[]} alerts from the live view
 * @param {WarmupAnswer | null} warmup the page's own warm-up reading
 */
export function showAlerts(alerts, warmup) {
  const all = withWarmup(alerts ?? [], warmup);
  const box = byId('alerts');
  box.dataset.count = String(all.length);
  replaceRows(
    box,
    all.length === 0
      ? [h('p', { class: 'alert-none' }, 'No failure known: every check the origin makes on this sale holds.')]
      : all.map(banner),
  );
}

/** Clears the banners (leaving the sale view). */
export function clearAlerts() {
  warmupFailingSince = null;
  const box = document.getElementById('alerts');
  if (box) {
    box.replaceChildren();
    box.dataset.count = '';
  }
}
