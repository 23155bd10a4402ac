// @ts-check
// Sale page: product, rules, countdown by the server's clock, stock hint, then ticket → purchase →
// poll (reservation, lottery entry or waiting-room place). No framework; calls only the public API
// (docs/design.md §3, §10). The decisions live in sale-flow.v1.js; this file fetches and draws.
// Assets are immutable per name: change this file → new name (and index.html).
import {
  ID,
  JWT,
  PURCHASE_URL,
  RESERVATION_ID,
  STATE_TEXT,
  STOCK_HINT_TEXT,
  afterAnswer,
  checkQuantity,
  priceText,
  reservationPollDelay,
  reservationStatus,
  rules,
  safeImageUrl,
  timer,
} from './sale-flow.v1.js';

/**
 * One of the page's elements, by its id (index.html's fixed elements), typed with what the page uses
 * of them: an input's value, a button's disabled, an image's src.
 * @type {(id: string) => PageElement}
 */
const $ = (id) => /** @type {PageElement} */ (document.getElementById(id));
/** @typedef {HTMLInputElement & HTMLButtonElement & HTMLImageElement} PageElement */
const params = new URLSearchParams(location.search);
const pathId = /^\/a\/([^/]+)$/.exec(location.pathname);
const requested = (pathId && pathId[1]) || params.get('activity') || '1';
const activityId = ID.test(requested) ? requested : null;
// The page is served with Referrer-Policy: no-referrer, so the token in the address never reaches
// a subresource or the API in a Referer; here it leaves the address bar and history as well.
if (params.has('token')) {
  const fromUrl = params.get('token') || '';
  if (JWT.test(fromUrl) && fromUrl.length <= 4096) localStorage.setItem('saleToken', fromUrl);
  params.delete('token');
  const rest = params.toString();
  history.replaceState(null, '', location.pathname + (rest ? '?' + rest : ''));
}
const stored = localStorage.getItem('saleToken') || '';
const token = JWT.test(stored) ? stored : '';

/** Purchase rounds (ticket + purchase) per click before the page gives up on a busy sale. */
const MAX_PURCHASE_ROUNDS = 8;
/** Polls of one reservation, and of one lottery entry / waiting place, before the page stops asking. */
const MAX_RESERVATION_POLLS = 120;
const MAX_QUEUE_POLLS = 1000;
/** How often the public activity is re-read (while paused: sooner, to show the reopening). */
const REFRESH_MS = 10_000;
const REFRESH_PAUSED_MS = 3_000;
/** Statuses drawn from the activity's own state rather than from a click. */
const AMBIENT = {
  ended: 'The sale has ended.',
  sold_out: 'Sold out.',
  paused: 'The sale is paused; it may resume shortly.',
};
/** Refusals after which clicking again cannot help. */
const BLOCKING = new Set(['sold_out', 'ended', 'limit', 'not_eligible', 'denied']);

/** @type {import('../../../contract/activity.js').PublicActivity | null} GET /api/activities/:id */
let activity = null;
let clockOffset = 0; // server time minus client time, so the countdown ignores a wrong client clock
let busy = false;
let held = false; // this user holds a reservation: nothing more to buy (a repeat returns the same one)
let blocked = false; // a refusal that another click cannot change
let lookedUp = false; // the caller's own reservation has been looked up once
let refreshing = false;
let lastRefresh = 0;
let pendingKey = null; // Idempotency-Key of the click being retried
let shown = null; // the status on screen, with its countdown if any

const serverNow = () => Date.now() + clockOffset;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * The live region (#status) changes only when the status does, so a screen reader hears each change
 * once; the seconds ticking beside it (#status-timer) are visible but not announced.
 */
function setStatus(s) {
  if (!s) return;
  shown = s;
  if ($('status').textContent !== s.text) $('status').textContent = s.text;
  $('status').dataset.kind = s.kind;
  if (s.final && BLOCKING.has(s.kind)) blocked = true;
  if (s.holds) held = true;
  tick();
}
const clearStatus = () => setStatus({ kind: '', text: '' });

function tick() {
  const s = shown;
  $('status-timer').textContent = s && s.until && s.tick ? s.tick(Math.max(0, (s.until - serverNow()) / 1000)) : '';
}

async function api(method, path, body, headers) {
  const res = await fetch(path, {
    method,
    cache: 'no-store',
    headers: Object.assign(
      token ? { authorization: 'Bearer ' + token } : {},
      body ? { 'content-type': 'application/json' } : {},
      headers,
    ),
    body: body ? JSON.stringify(body) : undefined,
  });
  let json = null;
  try {
    json = await res.json();
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: json || {}, retryAfter: Number(res.headers.get('retry-after')) || 0 };
}

function show(id, text) {
  $(id).textContent = text || '';
  $(id).hidden = !text;
}

async function loadActivity() {
  if (!activityId) {
    setStatus({ kind: 'load_error', text: 'No such sale.' });
    return false;
  }
  const sent = Date.now();
  // Public and the same for everyone: no Authorization, so shared caches may keep it. no-store here
  // only keeps this browser from reusing an older answer whose serverTime would skew the clock.
  const res = await fetch('/api/activities/' + activityId, { cache: 'no-store' }).catch(() => null);
  const body = res && res.status === 200 ? await res.json().catch(() => null) : null;
  if (!body) {
    const text = res && res.status === 404 ? 'No such sale.' : 'Could not load the sale; retrying…';
    setStatus({ kind: 'load_error', text });
    return false;
  }
  activity = body;
  lastRefresh = Date.now();
  const rtt = Date.now() - sent;
  clockOffset = Date.parse(activity.serverTime) + rtt / 2 - Date.now();
  $('title').textContent = activity.title;
  document.title = activity.title;
  show('description', activity.description);
  show('price', priceText(activity.priceCents, activity.currency));
  const image = safeImageUrl(activity.imageUrl);
  if (image && $('product-image').getAttribute('src') !== image) $('product-image').src = image;
  $('product-image').alt = activity.title;
  $('product-image').hidden = !image;
  const list = $('rules');
  list.replaceChildren(
    ...rules(activity).map((line) => Object.assign(document.createElement('li'), { textContent: line })),
  );
  $('state').textContent = STATE_TEXT[activity.state] || '';
  $('state').dataset.state = activity.state;
  const hint = STOCK_HINT_TEXT[activity.stockHint] ? activity.stockHint : '';
  show('stock-hint', hint && STOCK_HINT_TEXT[hint]);
  $('stock-hint').dataset.hint = hint;
  const max = Number.isSafeInteger(activity.maxPerUser) && activity.maxPerUser > 1 ? activity.maxPerUser : 1;
  $('quantity').max = String(max);
  $('quantity-field').hidden = max === 1;
  if ($('status').dataset.kind === 'load_error') clearStatus();
  return true;
}

function refreshActivity() {
  if (refreshing) return;
  refreshing = true;
  loadActivity()
    .catch(() => false)
    .finally(() => (refreshing = false));
}

function render() {
  if (!activity) return;
  const now = serverNow();
  const t = timer(activity, now);
  $('countdown-label').textContent = t.label;
  $('countdown').textContent = t.value;
  if (t.phase === 'running' && activity.state === 'upcoming') refreshActivity(); // just opened: fetch the real state
  const every = activity.state === 'paused' ? REFRESH_PAUSED_MS : REFRESH_MS;
  if (Date.now() - lastRefresh > every) refreshActivity();
  const ended = t.phase === 'ended';
  const closed = ended || t.phase === 'before' || activity.state !== 'open';
  $('buy').disabled = busy || held || blocked || closed;
  $('quantity').disabled = $('buy').disabled;
  tick();
  // The sale's own state, when no click has anything to say (and after the own reservation was looked
  // up): shown while it lasts, cleared when it is over — never over a click's own answer.
  if (busy || held || !lookedUp) return;
  const state = ended ? 'ended' : activity.state;
  if (AMBIENT[state]) {
    if (!$('status').dataset.kind || (shown.ambient && shown.kind !== state))
      setStatus({ kind: state, text: AMBIENT[state], ambient: true });
  } else if (shown && shown.ambient) clearStatus();
}

/** Polls a reservation until it is an order (or failed); shows the order number. */
async function pollReservation(pollUrl) {
  held = true;
  render();
  for (let i = 0; i < MAX_RESERVATION_POLLS; i++) {
    const res = await api('GET', pollUrl);
    if (res.status === 200) {
      const r = res.body;
      if (typeof r.orderNo === 'string') {
        show('order-no', r.orderNo);
        $('order').hidden = false;
      }
      const s = reservationStatus(r, clockOffset);
      if (s) setStatus(s);
      if (s && s.final) return;
    }
    await sleep(reservationPollDelay(i, res.retryAfter));
  }
  setStatus({ kind: 'queued', text: 'Still queued; reload later to check.' });
}

/** Shows the caller's own reservation if there is one (a reload, or a first answer that was lost). */
async function findOwnReservation() {
  if (!token) return false;
  for (let attempt = 0; attempt < 3; attempt++) {
    const res = await api('GET', '/api/activities/' + activityId + '/reservation');
    if (res.status === 200 && RESERVATION_ID.test(res.body.reservationId || '')) {
      await pollReservation('/api/reservations/' + res.body.reservationId);
      return true;
    }
    if (res.status !== 429 && res.status !== 503) return false; // 404: none
    await sleep((res.retryAfter || 1) * 1000);
  }
  return false;
}

/** Follows a purchase's answer through lottery entry / waiting place polls to its end. */
async function follow(step) {
  let poll = null;
  for (let polls = 0; polls < MAX_QUEUE_POLLS; polls++) {
    if (step.do === 'stop') {
      const r = step.status.reservation;
      if (r && typeof r.orderNo === 'string') {
        show('order-no', r.orderNo);
        $('order').hidden = false;
      }
      return setStatus(step.status);
    }
    if (step.do === 'lookup') return (await findOwnReservation()) || setStatus(step.refusal);
    setStatus(step.status);
    if (step.do !== 'poll') step = { do: 'poll', poll: null, afterMs: 1000 }; // a poll answered 425: ask again
    if (step.poll) poll = step.poll;
    if (!poll) return setStatus({ kind: 'try_later', text: 'Something went wrong; try again.' });
    if (poll.kind === 'reservation') return pollReservation(poll.url);
    await sleep(step.afterMs);
    const answer = await api('GET', poll.url);
    step = afterAnswer(answer, { activity, activityId, now: serverNow(), offsetMs: clockOffset, from: poll.kind });
  }
  setStatus({ kind: 'try_later', text: 'Still waiting; reload later to check.' });
}

async function buy() {
  if (busy || held || blocked) return;
  const quantity = checkQuantity($('quantity').value, activity.maxPerUser);
  if (!quantity) {
    setStatus({ kind: 'input', text: 'Choose a quantity from 1 to ' + $('quantity').max + '.' });
    return $('quantity').focus();
  }
  const hadFocus = document.activeElement === $('buy');
  busy = true;
  render();
  // The button is disabled while buying: keep the keyboard user's place on the status it explains.
  if (hadFocus) $('status').focus();
  pendingKey = pendingKey || crypto.randomUUID(); // the same click keeps its key across retries
  try {
    for (let round = 0; round < MAX_PURCHASE_ROUNDS; round++) {
      setStatus({ kind: 'working', text: 'Requesting…' });
      let answer = await api('POST', '/api/activities/' + activityId + '/tickets');
      if (answer.status === 200) {
        const purchaseUrl = PURCHASE_URL.exec(answer.body.purchaseUrl || '');
        if (!purchaseUrl || purchaseUrl[1] !== activityId)
          return setStatus({ kind: 'try_later', text: 'Something went wrong; try again.' });
        answer = await api('POST', purchaseUrl[0], { quantity }, { 'idempotency-key': pendingKey });
      }
      const step = afterAnswer(answer, {
        activity,
        activityId,
        now: serverNow(),
        offsetMs: clockOffset,
        from: 'purchase',
      });
      if (step.do === 'retry') {
        setStatus(step.status);
        await sleep(step.afterMs);
        continue;
      }
      if (step.do === 'resync') {
        // Our clock estimate was a little ahead of the edge's: resync and try again at the start.
        await loadActivity();
        await sleep(Math.max(answer.retryAfter * 1000, Date.parse(activity.startsAt) - serverNow(), 100));
        continue;
      }
      pendingKey = null; // answered: a new click is a new purchase
      return await follow(step);
    }
    setStatus({ kind: 'try_later', text: 'Too busy right now; try again later.' });
  } catch {
    setStatus({ kind: 'try_later', text: 'Network problem; try again.' });
  } finally {
    busy = false;
    render();
  }
}

$('buy').addEventListener('click', () => void buy());
$('product-image').addEventListener('error', () => ($('product-image').hidden = true));
// Start-up: loadActivity() and the reservation lookup answer their own errors in the status line.
void (async () => {
  if (!activityId) return loadActivity(); // says 'No such sale.'; nothing to retry
  while (!(await loadActivity())) await sleep(2000);
  render();
  setInterval(render, 250);
  await findOwnReservation().catch(() => false);
  lookedUp = true;
  render();
})();
