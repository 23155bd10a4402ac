// @ts-check
// The sales list and the create form. The form offers every option of `POST /admin/activities`;
// before creating, it asks the origin to check the body with the API's own schema
// (`POST /admin/console/api/activities/check`) and shows each refused field's message beside it, so
// the form refuses exactly what the API refuses. Empty optional fields are left out: the API's
// defaults (shown as placeholders) apply.
import { api, ApiError } from './console-api.js';
import { $, h, num, replaceRows, setText } from './console-dom.js';
import { showOverview } from './console-overview.js';

/** How often the list is read again while shown. */
const LIST_REFRESH_MS = 2_000;

const STATE_OPTIONS = ['open', 'paused'];
const ADMISSION_OPTIONS = ['fcfs', 'lottery'];
const OVERFLOW_OPTIONS = ['reject', 'queue'];

/** Every option of POST /admin/activities (origin/sale/sale-store.ts createActivitySchema), in form order. */
const FIELDS = [
  { name: 'activityId', label: 'Activity id', kind: 'id', required: true },
  { name: 'skuId', label: 'SKU id', kind: 'id', required: true },
  { name: 'title', label: 'Title', kind: 'text', required: true },
  { name: 'stock', label: 'Stock (units)', kind: 'int', required: true },
  { name: 'startsAt', label: 'Starts at (ISO-8601 with zone)', kind: 'text', required: true },
  { name: 'endsAt', label: 'Ends at (ISO-8601 with zone)', kind: 'text', required: true },
  { name: 'maxPerUser', label: 'Most per user', kind: 'int', placeholder: '1' },
  { name: 'paymentTimeoutSeconds', label: 'Payment timeout (s)', kind: 'int', placeholder: '900' },
  { name: 'userRatePerSec', label: 'User rate (per second)', kind: 'number', placeholder: '1' },
  { name: 'admissionRatePerSec', label: 'Admission rate (per second)', kind: 'int', placeholder: '5000' },
  { name: 'admissionShards', label: 'Admission shards', kind: 'int', placeholder: '4' },
  { name: 'state', label: 'State at creation', kind: 'select', options: STATE_OPTIONS },
  { name: 'stockBuckets', label: 'Stock buckets', kind: 'int', placeholder: '1' },
  { name: 'initialRelease', label: 'Initial release (rest held back)', kind: 'int', placeholder: 'all of stock' },
  { name: 'soldOutThreshold', label: 'Sold-out threshold', kind: 'int', placeholder: '0' },
  { name: 'admission', label: 'Admission', kind: 'select', options: ADMISSION_OPTIONS },
  { name: 'lotteryWindowMs', label: 'Lottery window (ms)', kind: 'int', placeholder: '3000' },
  { name: 'overflow', label: 'Beyond the admission rate', kind: 'select', options: OVERFLOW_OPTIONS },
  { name: 'eligibility.claim', label: 'Eligibility: JWT claim (empty: everyone)', kind: 'text' },
  { name: 'eligibility.values', label: 'Eligibility: accepted values (comma-separated)', kind: 'text' },
  { name: 'description', label: 'Description', kind: 'text' },
  { name: 'priceCents', label: 'Price (cents)', kind: 'int' },
  { name: 'currency', label: 'Currency (ISO 4217)', kind: 'text' },
  { name: 'imageUrl', label: 'Image URL', kind: 'text' },
  { name: 'shadow', label: 'Shadow sale (rehearsal traffic only; fixed at creation)', kind: 'checkbox' },
];

const fieldId = (name) => `f-${name.replace('.', '-')}`;
const errorId = (name) => `e-${name.replace('.', '-')}`;

let refreshTimer = 0;
let shown = false;

export function showSales() {
  shown = true;
  $('sales-view').hidden = false;
  if (!$('create-form').childElementCount) buildForm();
  void refresh();
}

export function hideSales() {
  shown = false;
  clearTimeout(refreshTimer);
  $('sales-view').hidden = true;
}

async function refresh() {
  clearTimeout(refreshTimer);
  try {
    const { sales } = await api('GET', '/admin/console/api/sales');
    if (!shown) return;
    showOverview(sales);
    replaceRows(
      $('sales').tBodies[0],
      sales.map((s) =>
        h(
          'tr',
          { dataset: { activity: s.activityId } },
          h(
            'th',
            { scope: 'row' },
            h('a', { href: `#/sale/${s.activityId}` }, `${s.shadow ? '[SHADOW] ' : ''}${s.title} (${s.activityId})`),
          ),
          h('td', {}, s.state),
          h('td', {}, s.publicState ?? 'n/a'),
          h('td', { class: 'n' }, s.left === null ? 'not warm' : num(s.left)),
          h('td', { class: 'n' }, num(s.heldBack)),
          h('td', { class: 'n' }, num(s.orders)),
          h('td', { class: 'n' }, num(s.paid)),
          h('td', { class: 'n' }, num(s.timedOut)),
        ),
      ),
    );
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) console.warn('sales list', err);
  }
  if (shown) refreshTimer = setTimeout(refresh, LIST_REFRESH_MS);
}

function input(f) {
  const common = { id: fieldId(f.name), name: f.name, 'aria-describedby': errorId(f.name) };
  if (f.kind === 'checkbox') return h('input', { ...common, type: 'checkbox' });
  if (f.kind === 'select')
    return h(
      'select',
      common,
      h('option', { value: '' }, '(default)'),
      ...f.options.map((o) => h('option', { value: o }, o)),
    );
  return h('input', {
    ...common,
    type: 'text',
    inputmode: f.kind === 'text' ? undefined : f.kind === 'number' ? 'decimal' : 'numeric',
    required: f.required,
    placeholder: f.placeholder,
    autocomplete: 'off',
  });
}

function buildForm() {
  const form = $('create-form');
  const now = Date.now();
  form.append(
    h(
      'div',
      { class: 'fields' },
      FIELDS.map((f) =>
        h(
          'p',
          { class: 'field' },
          h('label', { for: fieldId(f.name) }, f.label + (f.required ? ' *' : '')),
          input(f),
          h('span', { id: errorId(f.name), class: 'field-error' }),
        ),
      ),
    ),
    h('p', { id: 'create-error', class: 'error', role: 'alert', tabindex: '-1' }),
    h('p', {}, h('button', { type: 'submit' }, 'Create sale')),
  );
  // Suggested values: a sale a minute from now, an hour long.
  $(fieldId('startsAt')).value = new Date(now + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  $(fieldId('endsAt')).value = new Date(now + 3_660_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void create();
  });
}

/**
 * The body from the form: numbers as numbers (a text that is not one goes as text, for the API to
 * refuse); a ticked box as `true`, an unticked one left out (the API's default: false).
 */
function body() {
  const out = {};
  for (const f of FIELDS) {
    if (f.kind === 'checkbox') {
      if ($(fieldId(f.name)).checked) out[f.name] = true;
      continue;
    }
    const raw = $(fieldId(f.name)).value.trim();
    if (raw === '' || f.name.startsWith('eligibility.')) continue;
    out[f.name] = f.kind === 'int' || f.kind === 'number' ? (Number.isFinite(Number(raw)) ? Number(raw) : raw) : raw;
  }
  const claim = $(fieldId('eligibility.claim')).value.trim();
  const values = $(fieldId('eligibility.values')).value.trim();
  if (claim || values)
    out.eligibility = {
      claim,
      values: values
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean),
    };
  return out;
}

function clearErrors() {
  for (const f of FIELDS) {
    setText($(errorId(f.name)), '');
    $(fieldId(f.name)).removeAttribute('aria-invalid');
  }
  setText($('create-error'), '');
}

/** Each issue beside its field (`eligibility.values.0` → the values field); the rest above the button. */
function showIssues(issues) {
  const general = [];
  for (const issue of issues) {
    const f =
      FIELDS.find((x) => x.name === issue.field) ||
      FIELDS.find((x) => issue.field.startsWith(x.name + '.')) ||
      (issue.field === 'eligibility' ? FIELDS.find((x) => x.name === 'eligibility.claim') : null);
    if (!f) {
      general.push(issue.field ? `${issue.field}: ${issue.message}` : issue.message);
      continue;
    }
    const el = $(errorId(f.name));
    setText(el, el.textContent ? `${el.textContent} ${issue.message}` : issue.message);
    $(fieldId(f.name)).setAttribute('aria-invalid', 'true');
  }
  setText($('create-error'), general.join(' '));
  // Focus goes to the first refused field in the form's order (keyboard users start fixing there).
  const first = FIELDS.find((f) => $(fieldId(f.name)).getAttribute('aria-invalid') === 'true');
  (first ? $(fieldId(first.name)) : $('create-error')).focus();
}

async function create() {
  clearErrors();
  setText($('create-result'), '');
  const input = body();
  try {
    await api('POST', '/admin/console/api/activities/check', input);
    const created = await api('POST', '/admin/activities', input);
    const id = created.config.activityId;
    $('create-result').replaceChildren(
      `Created sale ${id} (${created.publicState}). `,
      h('a', { href: `#/sale/${id}`, id: 'open-created' }, `Open sale ${id}`),
    );
    void refresh();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (Array.isArray(err.body.issues)) showIssues(err.body.issues);
    else {
      // The API's own refusal (a duplicate id is 409): its message, on the field it names when it names one.
      const named = /^([A-Za-z.]+): (.*)$/.exec(err.message);
      showIssues([named ? { field: named[1], message: named[2] } : { field: '', message: err.message }]);
    }
  }
}
