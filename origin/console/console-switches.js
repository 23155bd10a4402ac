// @ts-check
// The seeds' switches, prepared in advance: one click each, asked for confirmation, sent to the
// existing admin API (which records the operator as the actor and pushes the change to the edge).
// What each answered is shown in #action-result; whether the edge serves it is console-sale.js's job.
import { api, ApiError, session } from './console-api.js';
import { $, confirmAction, h, setText, timeOf } from './console-dom.js';

/** The last change made here: the version it produced, for "applied at the edge". */
export const lastChange = { what: '', version: 0, at: 0 };

function field(id, label, attrs = {}) {
  return h(
    'span',
    { class: 'inline-field' },
    h('label', { for: id }, label),
    h('input', { id, type: 'text', inputmode: 'decimal', autocomplete: 'off', ...attrs }),
  );
}

const button = (id, text, cls) => h('button', { id, type: 'button', class: cls }, text);

/** Builds the controls for one sale; `current()` gives the latest live view (for "now:" figures). */
export function buildSwitches(activityId, onChanged) {
  const box = $('switches');
  box.replaceChildren(
    h(
      'div',
      { class: 'switch-row', role: 'group', 'aria-label': 'Sale state' },
      button('sw-pause', 'Pause'),
      button('sw-reopen', 'Reopen'),
      button('sw-stop', 'Stop: answer that the sale has ended', 'danger'),
    ),
    h(
      'div',
      { class: 'switch-row' },
      field('sw-user-rate', 'User rate (per second)'),
      button('sw-user-rate-apply', 'Apply'),
      h('span', { id: 'now-user-rate', class: 'now' }),
    ),
    h(
      'div',
      { class: 'switch-row' },
      field('sw-admission-rate', 'Admission rate (per second)', { inputmode: 'numeric' }),
      button('sw-admission-rate-apply', 'Apply'),
      h('span', { id: 'now-admission-rate', class: 'now' }),
    ),
    h(
      'div',
      { class: 'switch-row' },
      field('sw-threshold', 'Sold-out threshold (units)', { inputmode: 'numeric' }),
      button('sw-threshold-apply', 'Apply'),
      h('span', { id: 'now-threshold', class: 'now' }),
    ),
    h(
      'div',
      { class: 'switch-row' },
      field('sw-max-per-user', 'Most per user (units)', { inputmode: 'numeric' }),
      button('sw-max-per-user-apply', 'Apply'),
      h('span', { id: 'now-max-per-user', class: 'now' }),
    ),
    h(
      'div',
      { class: 'switch-row' },
      field('sw-claim', 'Eligibility claim', { inputmode: 'text' }),
      field('sw-values', 'values (comma-separated)', { inputmode: 'text' }),
      button('sw-eligibility-on', 'Turn eligibility on'),
      button('sw-eligibility-off', 'Turn eligibility check off'),
      h('span', { id: 'now-eligibility', class: 'now' }),
    ),
    h(
      'div',
      { class: 'switch-row' },
      field('sw-release', 'Release a tranche (units)', { inputmode: 'numeric' }),
      button('sw-release-apply', 'Release'),
      h('span', { id: 'now-held-back', class: 'now' }),
    ),
    h(
      'div',
      { class: 'switch-row' },
      field('sw-user', 'User id', { inputmode: 'numeric' }),
      button('sw-deny', 'Deny user', 'danger'),
      button('sw-allow', 'Allow user'),
    ),
  );

  const patch = (what, body) =>
    act(
      what,
      () => api('PATCH', `/admin/activities/${activityId}`, body),
      (a) => a.config.version,
    );
  const numberOf = (id) => {
    const raw = $(id).value.trim();
    return raw === '' || !Number.isFinite(Number(raw)) ? raw : Number(raw);
  };
  /**
   * Asks, makes the change and says how it went in the result line. Returns nothing: it is called
   * from click handlers, and every error it meets ends in the result line.
   * @param {string} what
   * @param {() => Promise<any>} call
   * @param {(answer: any) => number} [versionOf]
   */
  const act = (what, call, versionOf) => void attempt(what, call, versionOf);
  /** @type {(what: string, call: () => Promise<any>, versionOf?: (answer: any) => number) => Promise<void>} */
  const attempt = async (what, call, versionOf) => {
    if (!(await confirmAction(`${what}?`))) return;
    const result = $('action-result');
    try {
      const answer = await call();
      const version = versionOf ? versionOf(answer) : 0;
      Object.assign(lastChange, { what, version, at: Date.now() });
      const by = session.operator() ? ` by ${session.operator()}` : '';
      result.dataset.kind = 'ok';
      setText(
        result,
        `${what}: done${by} at ${timeOf(new Date().toISOString())}${version ? `, version ${version}` : ''}.`,
      );
      onChanged();
    } catch (err) {
      result.dataset.kind = 'error';
      if (err instanceof ApiError) setText(result, `${what}: refused (${err.code}): ${err.message}`);
      // No answer (the network, the call's timeout): the change may or may not have been made.
      else
        setText(
          result,
          `${what}: no answer (${/** @type {Error} */ (err).message}); check the figures before trying again.`,
        );
    }
  };

  $('sw-pause').addEventListener('click', () => patch('Pause the sale', { state: 'paused' }));
  $('sw-reopen').addEventListener('click', () => patch('Reopen the sale', { state: 'open' }));
  $('sw-stop').addEventListener('click', () =>
    patch('Stop the sale (buyers are told it has ended; this cannot be undone)', { state: 'stopped' }),
  );
  $('sw-user-rate-apply').addEventListener('click', () =>
    patch(`Set the user rate to ${$('sw-user-rate').value}/s`, { userRatePerSec: numberOf('sw-user-rate') }),
  );
  $('sw-admission-rate-apply').addEventListener('click', () =>
    patch(`Set the admission rate to ${$('sw-admission-rate').value}/s`, {
      admissionRatePerSec: numberOf('sw-admission-rate'),
    }),
  );
  $('sw-threshold-apply').addEventListener('click', () =>
    patch(`Set the sold-out threshold to ${$('sw-threshold').value}`, { soldOutThreshold: numberOf('sw-threshold') }),
  );
  $('sw-max-per-user-apply').addEventListener('click', () =>
    patch(`Set the per-user limit to ${$('sw-max-per-user').value}`, { maxPerUser: numberOf('sw-max-per-user') }),
  );
  $('sw-eligibility-on').addEventListener('click', () => {
    const values = $('sw-values')
      .value.split(',')
      .map((v) => v.trim())
      .filter(Boolean);
    patch(`Only buyers whose ${$('sw-claim').value} is ${values.join(' or ')}`, {
      eligibility: { claim: $('sw-claim').value.trim(), values },
    });
  });
  $('sw-eligibility-off').addEventListener('click', () =>
    patch('Turn the eligibility check off (everyone may buy)', { eligibility: null }),
  );
  $('sw-release-apply').addEventListener('click', () =>
    act(`Release ${$('sw-release').value} held-back units`, () =>
      api('POST', `/admin/activities/${activityId}/releases`, { units: numberOf('sw-release') }),
    ),
  );
  const user = () => encodeURIComponent($('sw-user').value.trim());
  $('sw-deny').addEventListener('click', () =>
    act(`Deny user ${$('sw-user').value}`, () => api('PUT', `/admin/deny/${user()}`)),
  );
  $('sw-allow').addEventListener('click', () =>
    act(`Allow user ${$('sw-user').value} again`, () => api('DELETE', `/admin/deny/${user()}`)),
  );
  $('warmup-now').onclick = () =>
    act('Warm up the sale now (loads stock and switches into Redis)', () =>
      api('POST', `/admin/activities/${activityId}/warmup`),
    );
  $('run-cleanup').onclick = () =>
    act('Run cleanup (Redis keys expire, settlement forgets the sale)', () =>
      api('POST', `/admin/activities/${activityId}/cleanup`),
    );
  return { act };
}

/** The "now:" figures beside the switches, from the live view. */
export function showCurrent(live) {
  const c = live.config;
  setText($('now-user-rate'), `now ${c.userRatePerSec}/s`);
  setText($('now-admission-rate'), `now ${c.admissionRatePerSec}/s`);
  setText($('now-threshold'), `now ${c.soldOutThreshold ?? 0}`);
  setText($('now-max-per-user'), `now ${c.maxPerUser}`);
  setText(
    $('now-eligibility'),
    c.eligibility ? `now: ${c.eligibility.claim} ∈ {${c.eligibility.values.join(', ')}}` : 'now: off',
  );
  setText($('now-held-back'), `${live.stock.heldBack} held back`);
  $('sw-pause').disabled = live.state !== 'open';
  $('sw-reopen').disabled = live.state !== 'paused';
  $('sw-stop').disabled = live.state === 'stopped';
}
