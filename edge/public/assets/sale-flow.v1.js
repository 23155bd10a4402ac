// @ts-check
// The sale page's decisions, without the DOM or the network: which text to show for an activity and
// a clock, and what to do with each answer of the purchase API (docs/design.md §3, §10). sale.v5.js does
// the fetching and the drawing; this module is unit-tested in Node (test/edge-node/sale-flow.test.ts).
// Assets are immutable per name: change this file → new name (and the import in sale.v*.js).

// Every value read from the address, storage or an answer is checked before it goes into a fetch
// path or header: ids are contract ids (docs/design.md §9), URLs must be this API's own paths.
export const ID = /^[1-9][0-9]{0,19}$/;
export const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
export const RESERVATION_ID = /^[1-9][0-9]{0,19}-[0-9a-f]{32}$/;
export const PURCHASE_URL = /^\/api\/activities\/([1-9][0-9]{0,19})\/purchase\?t=[A-Za-z0-9._-]{1,256}$/;
const RESERVATION_POLL = /^\/api\/reservations\/([1-9][0-9]{0,19})-[0-9a-f]{32}$/;
// Lottery entries and waiting-room places: `/api/activities/<this activity>/entries|waiting/<token>`,
// optionally with a signed `?t=` like the purchase URL. Nothing else is ever fetched.
const QUEUE_POLL =
  /^\/api\/activities\/([1-9][0-9]{0,19})\/(entries|waiting)\/[A-Za-z0-9_-]{1,128}(\?t=[A-Za-z0-9._-]{1,512})?$/;

/** @typedef {import('../../../contract/activity.js').PublicActivity} PublicActivity GET /api/activities/:id */
/** @typedef {import('../../../contract/reservation.js').ReservationBody} ReservationBody a reservation's status */

/** Lottery window when the public activity does not name one (docs/design.md §10 default). */
export const DEFAULT_LOTTERY_WINDOW_MS = 3000;
/** Poll spacing: the edge allows one status read per second per user. */
export const MIN_POLL_MS = 1000;
export const MAX_POLL_MS = 5000;

/** `{kind, url}` for a poll URL of this API and this activity, else null. */
export function checkPollUrl(url, activityId) {
  if (typeof url !== 'string') return null;
  const r = RESERVATION_POLL.exec(url);
  if (r) return r[1] === activityId ? { kind: 'reservation', url } : null;
  const q = QUEUE_POLL.exec(url);
  if (q && q[1] === activityId) return { kind: q[2] === 'entries' ? 'entry' : 'waiting', url };
  return null;
}

const pad = (n) => String(n).padStart(2, '0');

/** 3725 → "01:02:05"; a day or more → "2 d 03:00:00". */
export function formatDuration(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  const days = Math.floor(s / 86400);
  const hms = pad(Math.floor((s % 86400) / 3600)) + ':' + pad(Math.floor((s % 3600) / 60)) + ':' + pad(s % 60);
  return days > 0 ? days + ' d ' + hms : hms;
}

/**
 * "hh:mm:ss" of a server-clock instant as the buyer's own clock will read it then (their time zone,
 * and minus `offsetMs` = server − device clock), since that is the clock they will compare it with.
 */
export function clockTime(ms, offsetMs = 0) {
  const d = new Date(ms - offsetMs);
  return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
}

/**
 * The headline timer: before the start a countdown, then "ends in …", then nothing to count.
 * @param {PublicActivity} activity
 * @param {number} now
 */
export function timer(activity, now) {
  const starts = Date.parse(activity.startsAt);
  const ends = Date.parse(activity.endsAt);
  if (activity.state === 'ended' || now >= ends) return { phase: 'ended', label: 'Ended', value: '' };
  if (now < starts) return { phase: 'before', label: 'Starts in', value: formatDuration((starts - now) / 1000) };
  return { phase: 'running', label: 'Ends in', value: formatDuration((ends - now) / 1000) };
}

export const STATE_TEXT = {
  upcoming: 'Coming soon',
  open: 'On sale now',
  sold_out: 'Sold out',
  paused: 'Paused',
  ended: 'Ended',
};

export const STOCK_HINT_TEXT = {
  plenty: 'Plenty left',
  limited: 'Limited stock',
  few: 'Only a few left',
  sold_out: 'None left',
};

/** "€129.99" in the buyer's locale, priceCents in the currency's minor unit; null when not shown. */
export function priceText(priceCents, currency, locale) {
  if (!Number.isSafeInteger(priceCents) || priceCents < 0 || !/^[A-Z]{3}$/.test(currency || '')) return null;
  try {
    const format = new Intl.NumberFormat(locale, { style: 'currency', currency });
    const digits = format.resolvedOptions().maximumFractionDigits;
    return format.format(priceCents / 10 ** digits);
  } catch {
    return null;
  }
}

/** An image the page may show: the same checks as the admin API (https, or a path on this site). */
export function safeImageUrl(url) {
  if (typeof url !== 'string' || url.length > 2048) return null;
  if (/^\/(?!\/)[A-Za-z0-9._~%!$&'()*+,;=:@/-]*$/.test(url)) return url;
  return /^https:\/\/[^\s"'<>\\^`{|}@]+$/.test(url) ? url : null;
}

/**
 * The sale's rules, one line each.
 * @param {PublicActivity} activity
 * @param {string} [locale]
 */
export function rules(activity, locale) {
  const max = Number.isSafeInteger(activity.maxPerUser) && activity.maxPerUser > 0 ? activity.maxPerUser : 1;
  const when = (iso) => new Date(iso).toLocaleString(locale, { dateStyle: 'medium', timeStyle: 'short' });
  return [
    max === 1 ? 'One per person.' : 'At most ' + max + ' per person.',
    'On sale ' + when(activity.startsAt) + ' – ' + when(activity.endsAt) + ', while stock lasts.',
  ];
}

/** When a lottery's draw happens: the answer's own `drawAt`, else start + the activity's window. */
export function drawTime(activity, entry) {
  const at = entry && typeof entry.drawAt === 'string' ? Date.parse(entry.drawAt) : NaN;
  if (Number.isFinite(at)) return at;
  const win = Number.isSafeInteger(activity.lotteryWindowMs) ? activity.lotteryWindowMs : DEFAULT_LOTTERY_WINDOW_MS;
  return Date.parse(activity.startsAt) + win;
}

// A status the page shows: `kind` (CSS hook and test handle), `text` (announced through the live
// region) and, for a wait, `until` (ms on the server clock) + `tick` (the visible, not announced,
// countdown text beside it). `final` statuses end the purchase; `holds` means the user has a unit.
const status = (kind, text, extra) => Object.assign({ kind, text }, extra);

/**
 * @param {ReservationBody} r
 * @param {number} [offsetMs]
 */
export function reservationStatus(r, offsetMs = 0) {
  switch (r.status) {
    case 'queued':
      return status('queued', 'You are in the queue…');
    case 'ordered':
      return status(
        'ordered',
        'Order placed! Pay before ' + (r.expireAt ? clockTime(Date.parse(r.expireAt), offsetMs) : 'the deadline') + '.',
        { final: true },
      );
    case 'paid':
      return status('paid', 'Paid. Thank you!', { final: true });
    case 'timeout':
      return status('timeout', 'Your order timed out.', { final: true });
    case 'failed':
      return status('failed', 'Sorry, the order failed.', { final: true });
    default:
      return null;
  }
}

/** Refusals that end a purchase, by contract code (docs/design.md §3, §10). */
export const REFUSALS = {
  sold_out: ['sold_out', 'Sold out.'],
  ended: ['ended', 'The sale has ended.'],
  limit_exceeded: ['limit', 'You already bought this item.'],
  insufficient_stock: ['insufficient_stock', 'Not enough left for that many; try a smaller quantity.'],
  paused: ['paused', 'The sale is paused; try again when it resumes.'],
  not_eligible: ['not_eligible', 'This sale is for eligible members only.'],
  denied: ['denied', 'Your account cannot buy in this sale.'],
  unauthenticated: ['error', 'Please log in (token missing or expired).'],
  bad_ticket: ['error', 'Please log in again.'],
};

const retryAfterMs = (answer, fallbackMs) => (answer.retryAfter > 0 ? answer.retryAfter * 1000 : fallbackMs);

/**
 * What to do with an answer (`{status, body, retryAfter}`) of a purchase, or of a poll of a lottery
 * entry or a waiting-room place. Steps:
 *   {do: 'poll', poll: {kind, url}, afterMs, status}   keep polling (the same or a new URL)
 *   {do: 'retry', afterMs, status}                      buy again after a wait (same Idempotency-Key)
 *   {do: 'resync'}                                      too early by our clock: reload the activity
 *   {do: 'lookup', refusal}                             sold out / limit: first look for our own reservation
 *   {do: 'stop', status}                                final
 * `ctx` = {activity, activityId, now (server clock ms), offsetMs (server − device clock),
 * from: 'purchase' | 'entry' | 'waiting' (what was asked)}.
 */
export function afterAnswer(answer, ctx) {
  const b = answer.body || {};
  const ok = answer.status === 200 || answer.status === 202;
  if (ok && RESERVATION_ID.test(b.reservationId || '') && b.reservationId.split('-')[0] === ctx.activityId) {
    // A reservation: from a purchase, a won draw, or a waiting place whose turn came.
    const poll = checkPollUrl(b.pollUrl, ctx.activityId) || {
      kind: 'reservation',
      url: '/api/reservations/' + b.reservationId,
    };
    if (poll.kind !== 'reservation') return stop(status('try_later', 'Something went wrong; try again.'));
    const shown = reservationStatus(b, ctx.offsetMs) || status('queued', 'You are in the queue…');
    return shown.final
      ? { do: 'stop', status: Object.assign(shown, { holds: true, reservation: b }) }
      : { do: 'poll', poll, afterMs: 0, status: Object.assign(shown, { holds: true }) };
  }
  // A reservation id of another shape or sale is never fetched.
  if (ok && b.reservationId !== undefined) return stop(status('try_later', 'Something went wrong; try again.'));
  if (ok && b.status === 'entered') {
    // A purchase must name the entry's poll URL; a poll before the draw may just say "entered" again.
    const poll = b.pollUrl === undefined && ctx.from === 'entry' ? null : checkPollUrl(b.pollUrl, ctx.activityId);
    if (poll ? poll.kind !== 'entry' : ctx.from !== 'entry')
      return stop(status('try_later', 'Something went wrong; try again.'));
    const at = drawTime(ctx.activity, b);
    return {
      do: 'poll',
      poll,
      afterMs: Math.max(MIN_POLL_MS, at - ctx.now),
      status: status('entered', "You're in the draw — results at " + clockTime(at, ctx.offsetMs)),
    };
  }
  if (ok && b.status === 'drawing' && ctx.from === 'entry') {
    return {
      do: 'poll',
      poll: null,
      afterMs: retryAfterMs(answer, MIN_POLL_MS),
      status: status('drawing', 'Drawing the winners…'),
    };
  }
  if (ok && b.status === 'lost')
    return stop(status('lost', 'Not drawn this time — every unit went to other entrants.'));
  if (ok && b.status === 'waiting') {
    // A poll may name a new URL; a purchase must. Position / ETA are shown as sent (the server counts).
    const poll = b.pollUrl === undefined ? null : checkPollUrl(b.pollUrl, ctx.activityId);
    if ((b.pollUrl !== undefined || ctx.from === 'purchase') && (!poll || poll.kind !== 'waiting'))
      return stop(status('try_later', 'Something went wrong; try again.'));
    const position = Number.isSafeInteger(b.position) && b.position >= 0 ? b.position : null;
    const eta = Number.isFinite(b.etaSeconds) && b.etaSeconds >= 0 ? Math.ceil(b.etaSeconds) : null;
    const every = Number.isFinite(b.pollAfterMs) ? Math.min(Math.max(b.pollAfterMs, MIN_POLL_MS), 60_000) : MIN_POLL_MS;
    const text = position === null ? 'You are in line' : 'You are number ' + (position + 1) + ' in line';
    const extra = eta === null ? {} : { until: ctx.now + eta * 1000, tick: (s) => '— about ' + Math.ceil(s) + ' s' };
    return { do: 'poll', poll, afterMs: every, status: status('waiting', text, extra) };
  }
  const code = b.error;
  if (answer.status === 425 || code === 'too_early') return { do: 'resync' };
  if (answer.status === 429 || code === 'rate_limited') {
    const afterMs = retryAfterMs(answer, MIN_POLL_MS);
    // A poll that came too soon just waits; a purchase shows the countdown to its retry.
    if (ctx.from !== 'purchase') return { do: 'poll', poll: null, afterMs, status: null };
    return {
      do: 'retry',
      afterMs,
      status: status('rate_limited', 'Too many tries; retrying', {
        until: ctx.now + afterMs,
        tick: (s) => 'in ' + Math.ceil(s) + ' s',
      }),
    };
  }
  if (code === 'sold_out' || code === 'limit_exceeded') return { do: 'lookup', refusal: refusal(code) };
  if (REFUSALS[code]) return stop(refusal(code));
  if (ctx.from !== 'purchase' && answer.status === 404)
    return stop(status('try_later', 'Your place was lost; try again.'));
  // busy, unavailable, network: try again after the server's hint.
  const afterMs = retryAfterMs(answer, MIN_POLL_MS);
  if (ctx.from !== 'purchase') return { do: 'poll', poll: null, afterMs, status: null };
  return {
    do: 'retry',
    afterMs,
    status: status('retry', 'Busy; retrying', { until: ctx.now + afterMs, tick: (s) => 'in ' + Math.ceil(s) + ' s' }),
  };
}

const stop = (s) => ({ do: 'stop', status: s });
export const refusal = (code) => status(REFUSALS[code][0], REFUSALS[code][1], { final: true });

/** Backoff of a queued reservation's poll: 1 s, 1.5 s, … up to 5 s — a settlement backlog is no reason to hammer. */
export function reservationPollDelay(attempt, retryAfter) {
  return retryAfter > 0 ? retryAfter * 1000 : Math.min(MAX_POLL_MS, MIN_POLL_MS * 1.5 ** Math.min(attempt, 5));
}

/** A quantity the page may send: an integer 1 … maxPerUser. */
export function checkQuantity(value, maxPerUser) {
  const n = Number(value);
  const max = Number.isSafeInteger(maxPerUser) && maxPerUser > 0 ? maxPerUser : 1;
  return Number.isInteger(n) && n >= 1 && n <= max ? n : null;
}
