// Sale page: countdown from the server's clock, then ticket → purchase → poll. No framework.
// Calls only the public API of DESIGN §3. Assets are immutable per name: change this file → new name.
(() => {
  'use strict';
  const $ = (id) => document.getElementById(id);
  // Every value read from the address, storage or an answer is checked before it goes into a fetch
  // path or header: ids are contract ids (DESIGN §9), URLs must be this API's own paths.
  const ID = /^[1-9][0-9]{0,19}$/;
  const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
  const RESERVATION_ID = /^[1-9][0-9]{0,19}-[0-9a-f]{32}$/;
  const PURCHASE_URL = /^\/api\/activities\/([1-9][0-9]{0,19})\/purchase\?t=[A-Za-z0-9._-]{1,256}$/;
  const POLL_URL = /^\/api\/reservations\/([1-9][0-9]{0,19}-[0-9a-f]{32})$/;

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

  let activity = null;
  let clockOffset = 0; // server time minus client time, so the countdown ignores a wrong client clock
  let busy = false;
  let held = false; // this user holds a reservation: nothing more to buy (a repeat returns the same one)
  let lookedUp = false; // the caller's own reservation has been looked up once
  let refreshing = false;
  let pendingKey = null; // Idempotency-Key of the click being retried

  const serverNow = () => Date.now() + clockOffset;
  const setStatus = (text, kind) => {
    $('status').textContent = text;
    $('status').dataset.kind = kind || '';
  };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

  async function loadActivity() {
    if (!activityId) {
      setStatus('No such sale.', 'load_error');
      return false;
    }
    const sent = Date.now();
    // Public and the same for everyone: no Authorization, so shared caches may keep it. no-store here
    // only keeps this browser from reusing an older answer whose serverTime would skew the clock.
    const res = await fetch('/api/activities/' + activityId, { cache: 'no-store' }).catch(() => null);
    const body = res && res.status === 200 ? await res.json().catch(() => null) : null;
    if (!body) {
      setStatus(res && res.status === 404 ? 'No such sale.' : 'Could not load the sale; retrying…', 'load_error');
      return false;
    }
    activity = body;
    const rtt = Date.now() - sent;
    clockOffset = Date.parse(activity.serverTime) + rtt / 2 - Date.now();
    $('title').textContent = activity.title;
    $('window').textContent =
      new Date(activity.startsAt).toLocaleString() + ' – ' + new Date(activity.endsAt).toLocaleString();
    $('state').textContent = activity.state.replace('_', ' ');
    $('state').dataset.state = activity.state;
    if ($('status').dataset.kind === 'load_error') setStatus('', '');
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
    const left = Date.parse(activity.startsAt) - serverNow();
    if (left > 0) {
      const s = Math.ceil(left / 1000);
      const pad = (n) => String(n).padStart(2, '0');
      $('countdown').textContent =
        pad(Math.floor(s / 3600)) + ':' + pad(Math.floor((s % 3600) / 60)) + ':' + pad(s % 60);
      $('buy').disabled = true;
      return;
    }
    $('countdown-label').textContent = 'Started';
    $('countdown').textContent = '00:00:00';
    if (activity.state === 'upcoming') refreshActivity(); // just opened: fetch the real state
    const ended = serverNow() >= Date.parse(activity.endsAt) || activity.state === 'ended';
    const soldOut = activity.state === 'sold_out';
    $('buy').disabled = busy || held || ended || soldOut;
    if (!busy && !held && lookedUp && !$('status').textContent) {
      if (ended) setStatus('The sale has ended.', 'ended');
      else if (soldOut) setStatus('Sold out.', 'sold_out');
    }
  }

  async function poll(pollUrl) {
    const m = POLL_URL.exec(pollUrl || '');
    if (!m || m[1].split('-')[0] !== activityId) return setStatus('Something went wrong; try again.', 'try_later');
    held = true;
    render();
    for (let i = 0; i < 120; i++) {
      const res = await api('GET', pollUrl);
      if (res.status === 200) {
        const r = res.body;
        if (r.orderNo) $('order-no').textContent = r.orderNo;
        if (r.status === 'queued') setStatus('You are in the queue…', 'queued');
        else if (r.status === 'ordered') {
          const by = r.expireAt ? new Date(r.expireAt).toLocaleTimeString() : 'the deadline';
          return setStatus('Order placed! Pay before ' + by + '.', 'ordered');
        } else if (r.status === 'paid') return setStatus('Paid. Thank you!', 'paid');
        else if (r.status === 'timeout') return setStatus('Your order timed out.', 'timeout');
        else if (r.status === 'failed') return setStatus('Sorry, the order failed.', 'failed');
      }
      // Back off while queued (1 s, 1.5 s, … up to 5 s): a settlement backlog is not a reason to hammer.
      await sleep(res.retryAfter ? res.retryAfter * 1000 : Math.min(5000, 1000 * 1.5 ** Math.min(i, 5)));
    }
    setStatus('Still queued; reload later to check.', 'queued');
  }

  /** Shows the caller's own reservation if there is one (a reload, or a first answer that was lost). */
  async function findOwnReservation() {
    if (!token) return false;
    for (let attempt = 0; attempt < 3; attempt++) {
      const res = await api('GET', '/api/activities/' + activityId + '/reservation');
      if (res.status === 200 && RESERVATION_ID.test(res.body.reservationId || '')) {
        await poll('/api/reservations/' + res.body.reservationId);
        return true;
      }
      if (res.status !== 429 && res.status !== 503) return false; // 404: none
      await sleep((res.retryAfter || 1) * 1000);
    }
    return false;
  }

  const FINAL = {
    sold_out: ['Sold out.', 'sold_out'],
    ended: ['The sale has ended.', 'ended'],
    limit_exceeded: ['You already bought this item.', 'limit'],
    paused: ['The sale is paused; try again shortly.', 'paused'],
    unauthenticated: ['Please log in (token missing or expired).', 'error'],
    bad_ticket: ['Please log in again.', 'error'],
  };

  /** A final refusal; but sold_out / limit_exceeded may hide this user's own reservation. */
  async function refused(code) {
    if ((code === 'sold_out' || code === 'limit_exceeded') && (await findOwnReservation())) return;
    const final = FINAL[code] || ['Something went wrong; try again.', 'try_later'];
    setStatus(final[0], final[1]);
  }

  async function buy() {
    if (busy || held) return;
    busy = true;
    render();
    pendingKey = pendingKey || crypto.randomUUID(); // the same click keeps its key across retries
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        setStatus('Requesting…', 'working');
        const ticket = await api('POST', '/api/activities/' + activityId + '/tickets');
        if (ticket.status !== 200) {
          const code = ticket.body.error;
          if (code === 'too_early') {
            // Our clock estimate was a little ahead of the edge's: resync and try again at the start.
            await loadActivity();
            await sleep(Math.max(ticket.retryAfter * 1000, Date.parse(activity.startsAt) - serverNow(), 100));
            continue;
          }
          if (FINAL[code]) return await refused(code);
          setStatus('Busy, retrying…', 'retry');
          await sleep((ticket.retryAfter || 1) * 1000);
          continue;
        }
        const purchaseUrl = PURCHASE_URL.exec(ticket.body.purchaseUrl || '');
        if (!purchaseUrl || purchaseUrl[1] !== activityId)
          return setStatus('Something went wrong; try again.', 'try_later');
        const res = await api('POST', purchaseUrl[0], { quantity: 1 }, { 'idempotency-key': pendingKey });
        if (res.status === 202 || res.status === 200) {
          pendingKey = null;
          setStatus('You are in the queue…', 'queued');
          return await poll(res.body.pollUrl);
        }
        const code = res.body.error;
        if (FINAL[code]) return await refused(code);
        setStatus('Busy, try later — retrying…', 'retry');
        await sleep((res.retryAfter || 1) * 1000);
      }
      setStatus('Too busy right now; try again later.', 'try_later');
    } catch {
      setStatus('Network problem; try again.', 'try_later');
    } finally {
      busy = false;
      render();
    }
  }

  $('buy').addEventListener('click', buy);
  (async () => {
    if (!activityId) return loadActivity(); // says 'No such sale.'; nothing to retry
    while (!(await loadActivity())) await sleep(2000);
    render();
    setInterval(render, 250);
    setInterval(refreshActivity, 10000);
    await findOwnReservation().catch(() => false);
    lookedUp = true;
    render();
  })();
})();
