// Sale page: countdown from the server's clock, then ticket → purchase → poll. No framework.
(() => {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const pathId = /^\/a\/(\d+)/.exec(location.pathname);
  const activityId = (pathId && pathId[1]) || params.get('activity') || '1';
  if (params.get('token')) localStorage.setItem('saleToken', params.get('token'));
  const token = params.get('token') || localStorage.getItem('saleToken') || '';

  let activity = null;
  let clockOffset = 0; // server time minus client time, so the countdown ignores a wrong client clock
  let busy = false;
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
      headers: Object.assign(
        { authorization: 'Bearer ' + token },
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
    const sent = Date.now();
    const res = await api('GET', '/api/activities/' + activityId);
    if (res.status !== 200) {
      setStatus(res.status === 404 ? 'No such sale.' : 'Could not load the sale; retrying…', 'error');
      return false;
    }
    activity = res.body;
    const rtt = Date.now() - sent;
    clockOffset = Date.parse(activity.serverTime) + rtt / 2 - Date.now();
    $('title').textContent = activity.title;
    $('window').textContent =
      new Date(activity.startsAt).toLocaleString() + ' – ' + new Date(activity.endsAt).toLocaleString();
    $('state').textContent = activity.state;
    $('state').dataset.state = activity.state;
    return true;
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
    $('countdown').textContent = '00:00:00';
    const ended = serverNow() >= Date.parse(activity.endsAt) || activity.state === 'ended';
    $('buy').disabled = busy || ended || activity.state === 'sold_out';
    if (ended && !busy && !$('status').textContent) setStatus('The sale has ended.', 'ended');
  }

  async function poll(pollUrl) {
    for (let i = 0; i < 120; i++) {
      const res = await api('GET', pollUrl);
      if (res.status === 200) {
        const r = res.body;
        if (r.orderNo) $('order-no').textContent = r.orderNo;
        if (r.status === 'queued') setStatus('You are in the queue…', 'queued');
        else if (r.status === 'ordered')
          return setStatus('Order placed! Pay before ' + (r.expireAt || 'the deadline') + '.', 'ordered');
        else if (r.status === 'paid') return setStatus('Paid. Thank you!', 'paid');
        else if (r.status === 'timeout') return setStatus('Your order timed out.', 'timeout');
        else if (r.status === 'failed') return setStatus('Sorry, the order failed.', 'failed');
      }
      await sleep(res.retryAfter ? res.retryAfter * 1000 : 1000);
    }
    setStatus('Still queued; reload later to check.', 'queued');
  }

  async function findOwnReservation() {
    const res = await api('GET', '/api/activities/' + activityId + '/reservation');
    if (res.status === 200 && res.body.reservationId) {
      await poll('/api/reservations/' + res.body.reservationId);
      return true;
    }
    return false;
  }

  const FINAL = {
    sold_out: ['Sold out.', 'sold_out'],
    ended: ['The sale has ended.', 'ended'],
    limit_exceeded: ['You already bought this item.', 'limit'],
    too_early: ['Not yet — wait for the countdown.', 'early'],
    unauthenticated: ['Please log in (token missing or expired).', 'error'],
  };

  async function buy() {
    if (busy) return;
    busy = true;
    render();
    pendingKey = pendingKey || crypto.randomUUID(); // the same click keeps its key across retries
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        setStatus('Requesting…', 'working');
        const ticket = await api('POST', '/api/activities/' + activityId + '/tickets');
        if (ticket.status !== 200) {
          const final = FINAL[ticket.body.error];
          if (final) return setStatus(final[0], final[1]);
          setStatus('Busy, retrying…', 'retry');
          await sleep((ticket.retryAfter || 1) * 1000);
          continue;
        }
        const res = await api('POST', ticket.body.purchaseUrl, { quantity: 1 }, { 'idempotency-key': pendingKey });
        if (res.status === 202 || res.status === 200) {
          pendingKey = null;
          setStatus('You are in the queue…', 'queued');
          return await poll(res.body.pollUrl);
        }
        if (res.body.error === 'sold_out' || res.body.error === 'limit_exceeded') {
          // A holder whose first answer was lost still finds the reservation.
          if (await findOwnReservation()) return;
        }
        const final = FINAL[res.body.error];
        if (final) return setStatus(final[0], final[1]);
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
    while (!(await loadActivity())) await sleep(2000);
    render();
    setInterval(render, 250);
    setInterval(loadActivity, 10000);
    findOwnReservation().catch(() => {});
  })();
})();
