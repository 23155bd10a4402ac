/**
 * The sale page's state machine (edge/public/assets/sale-flow.v1.js), in Node: what the page shows
 * and does for each answer of the purchase API — including the lottery (`entered` → `drawing` →
 * reservation | `lost`) and waiting-room (`waiting` → … → reservation | `sold_out`) answers of
 * docs/design.md §10, whose backends land separately. The DOM side is tested in Chromium (test/e2e/sale-page).
 */
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('../../edge/public/assets/sale-flow.v1.js', import.meta.url));
let flow: any;
beforeAll(async () => {
  flow = await import(MODULE);
});

const activityId = '123456';
const now = Date.parse('2026-11-30T12:00:00.000Z');
const activity = {
  activityId,
  title: 'Headphones',
  startsAt: '2026-11-30T12:00:00.000Z',
  endsAt: '2026-11-30T13:00:00.000Z',
  state: 'open',
  maxPerUser: 2,
};
const resId = `${activityId}-${'ab'.repeat(16)}`;
const ctx = (from: string, over: Record<string, unknown> = {}) => ({ activity, activityId, now, from, ...over });
const ok = (body: unknown, status = 200) => ({ status, body, retryAfter: 0 });
const err = (status: number, error: string, retryAfter = 0) => ({ status, body: { error }, retryAfter });
const entryUrl = `/api/activities/${activityId}/entries/e-42`;
const waitUrl = `/api/activities/${activityId}/waiting/w-42`;

describe('timer and texts', () => {
  it('counts down to the start, then "ends in", then ended', () => {
    const start = Date.parse(activity.startsAt);
    expect(flow.timer(activity, start - 3_725_000)).toEqual({ phase: 'before', label: 'Starts in', value: '01:02:05' });
    expect(flow.timer(activity, start - 2 * 86_400_000 - 1000)).toMatchObject({ value: '2 d 00:00:01' });
    expect(flow.timer(activity, start + 1000)).toEqual({ phase: 'running', label: 'Ends in', value: '00:59:59' });
    expect(flow.timer(activity, start + 3_600_000)).toEqual({ phase: 'ended', label: 'Ended', value: '' });
    expect(flow.timer({ ...activity, state: 'ended' }, start + 1000).phase).toBe('ended');
  });

  it('price in the currency minor unit; rules; stock hints', () => {
    expect(flow.priceText(12_999, 'EUR', 'en-US')).toBe('€129.99');
    expect(flow.priceText(5000, 'JPY', 'en-US')).toBe('¥5,000');
    expect(flow.priceText(100, undefined, 'en-US')).toBeNull();
    expect(flow.priceText(1.5, 'EUR', 'en-US')).toBeNull();
    expect(flow.rules(activity, 'en-US')[0]).toBe('At most 2 per person.');
    expect(flow.rules({ ...activity, maxPerUser: 1 }, 'en-US')[0]).toBe('One per person.');
    expect(flow.STOCK_HINT_TEXT).toEqual({
      plenty: 'Plenty left',
      limited: 'Limited stock',
      few: 'Only a few left',
      sold_out: 'None left',
    });
  });

  it('only https or site-relative images; only integer quantities within the limit', () => {
    expect(flow.safeImageUrl('https://cdn.example.com/a.png')).toBe('https://cdn.example.com/a.png');
    expect(flow.safeImageUrl('/img/a.png')).toBe('/img/a.png');
    for (const bad of ['http://x/a.png', '//x/a.png', 'javascript:alert(1)', 'data:image/png;base64,AA', 'a.png', 1])
      expect(flow.safeImageUrl(bad)).toBeNull();
    expect([1, 2, '2'].map((q) => flow.checkQuantity(q, 2))).toEqual([1, 2, 2]);
    expect([0, 3, 1.5, '1e0x', -1, ''].map((q) => flow.checkQuantity(q, 2))).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
  });

  it('poll URLs: only this API and this activity', () => {
    expect(flow.checkPollUrl(`/api/reservations/${resId}`, activityId)).toEqual({
      kind: 'reservation',
      url: `/api/reservations/${resId}`,
    });
    expect(flow.checkPollUrl(entryUrl, activityId)).toEqual({ kind: 'entry', url: entryUrl });
    expect(flow.checkPollUrl(`${waitUrl}?t=abc.def`, activityId)).toEqual({
      kind: 'waiting',
      url: `${waitUrl}?t=abc.def`,
    });
    for (const bad of [
      `/api/reservations/999-${'ab'.repeat(16)}`, // another activity
      `/api/activities/999/entries/e-42`,
      `https://evil.example/api/activities/${activityId}/entries/e-42`,
      `/api/activities/${activityId}/entries/../../internal`,
      `/api/activities/${activityId}/other/x`,
      `${waitUrl}?u=1`,
      undefined,
    ])
      expect(flow.checkPollUrl(bad, activityId)).toBeNull();
  });
});

describe('purchase answers', () => {
  it('202 queued → poll the reservation; a repeat that is already ordered shows the order', () => {
    const step = flow.afterAnswer(
      ok({ status: 'queued', reservationId: resId, pollUrl: `/api/reservations/${resId}` }, 202),
      ctx('purchase'),
    );
    expect(step).toMatchObject({
      do: 'poll',
      poll: { kind: 'reservation' },
      status: { kind: 'queued', text: 'You are in the queue…', holds: true },
    });
    const expireAt = new Date(now + 900_000).toISOString();
    const repeat = flow.afterAnswer(
      ok({ reservationId: resId, status: 'ordered', orderNo: 'N1', expireAt }),
      ctx('purchase'),
    );
    expect(repeat.do).toBe('stop');
    expect(repeat.status.kind).toBe('ordered');
    expect(repeat.status.text).toBe(`Order placed! Pay before ${flow.clockTime(now + 900_000)}.`);
  });

  it('refusals: each contract code has its own status; sold_out and limit_exceeded first look up the own reservation', () => {
    const cases: [number, string, string, string][] = [
      [403, 'not_eligible', 'not_eligible', 'This sale is for eligible members only.'],
      [403, 'denied', 'denied', 'Your account cannot buy in this sale.'],
      [409, 'insufficient_stock', 'insufficient_stock', 'Not enough left for that many; try a smaller quantity.'],
      [503, 'paused', 'paused', 'The sale is paused; try again when it resumes.'],
      [410, 'ended', 'ended', 'The sale has ended.'],
      [401, 'unauthenticated', 'error', 'Please log in (token missing or expired).'],
    ];
    for (const [status, code, kind, text] of cases)
      expect(flow.afterAnswer(err(status, code), ctx('purchase'))).toEqual({
        do: 'stop',
        status: { kind, text, final: true },
      });
    expect(flow.afterAnswer(err(409, 'sold_out'), ctx('purchase'))).toEqual({
      do: 'lookup',
      refusal: { kind: 'sold_out', text: 'Sold out.', final: true },
    });
    expect(flow.afterAnswer(err(409, 'limit_exceeded'), ctx('purchase')).do).toBe('lookup');
    expect(flow.afterAnswer(err(425, 'too_early'), ctx('purchase'))).toEqual({ do: 'resync' });
  });

  it('429 rate_limited: retry after Retry-After with a countdown beside the status', () => {
    const step = flow.afterAnswer(err(429, 'rate_limited', 4), ctx('purchase'));
    expect(step.do).toBe('retry');
    expect(step.afterMs).toBe(4000);
    expect(step.status).toMatchObject({ kind: 'rate_limited', text: 'Too many tries; retrying', until: now + 4000 });
    expect(step.status.tick(3.2)).toBe('in 4 s');
    const busy = flow.afterAnswer(err(503, 'busy', 2), ctx('purchase'));
    expect([busy.do, busy.afterMs, busy.status.kind]).toEqual(['retry', 2000, 'retry']);
  });
});

describe('lottery (docs/design.md §10 admission "lottery")', () => {
  it('entered → "You\'re in the draw — results at hh:mm:ss", first poll at the draw', () => {
    const step = flow.afterAnswer(ok({ status: 'entered', entryId: 'e-42', pollUrl: entryUrl }, 202), ctx('purchase'));
    const drawAt = Date.parse(activity.startsAt) + flow.DEFAULT_LOTTERY_WINDOW_MS;
    expect(step).toMatchObject({ do: 'poll', poll: { kind: 'entry', url: entryUrl }, afterMs: drawAt - now });
    expect(step.status).toEqual({ kind: 'entered', text: `You're in the draw — results at ${flow.clockTime(drawAt)}` });
    // The activity's own window, or the answer's drawAt, when given.
    const later = flow.afterAnswer(
      ok({ status: 'entered', entryId: 'e', pollUrl: entryUrl }, 202),
      ctx('purchase', { activity: { ...activity, lotteryWindowMs: 10_000 } }),
    );
    expect(later.afterMs).toBe(10_000);
    const named = flow.afterAnswer(
      ok({ status: 'entered', entryId: 'e', pollUrl: entryUrl, drawAt: new Date(now + 7000).toISOString() }, 202),
      ctx('purchase'),
    );
    expect(named.status.text).toBe(`You're in the draw — results at ${flow.clockTime(now + 7000)}`);
  });

  it('a poll before the draw may say "entered" again: keep polling the same entry until the draw', () => {
    const again = flow.afterAnswer(ok({ status: 'entered' }), ctx('entry', { now: now + 1000 }));
    const drawAt = Date.parse(activity.startsAt) + flow.DEFAULT_LOTTERY_WINDOW_MS;
    expect(again).toMatchObject({ do: 'poll', poll: null, afterMs: drawAt - now - 1000, status: { kind: 'entered' } });
    // "drawing" is an entry's answer only; as a purchase answer it is not taken for a draw.
    expect(flow.afterAnswer(ok({ status: 'drawing' }, 202), ctx('purchase')).status.kind).toBe('retry');
  });

  it("times are shown as the buyer's own clock will read them (server − device offset taken off)", () => {
    const at = now + 3_600_000;
    expect(flow.clockTime(at, 3_600_000)).toBe(flow.clockTime(now));
    const step = flow.afterAnswer(
      ok({ status: 'entered', entryId: 'e', pollUrl: entryUrl }, 202),
      ctx('purchase', { offsetMs: -3_600_000 }),
    );
    const drawAt = Date.parse(activity.startsAt) + flow.DEFAULT_LOTTERY_WINDOW_MS;
    expect(step.status.text).toBe(`You're in the draw — results at ${flow.clockTime(drawAt + 3_600_000)}`);
    const ordered = flow.reservationStatus({ status: 'ordered', expireAt: new Date(now).toISOString() }, 60_000);
    expect(ordered.text).toBe(`Order placed! Pay before ${flow.clockTime(now - 60_000)}.`);
  });

  it('drawing → keep polling; a reservation → its poll; lost → final', () => {
    expect(flow.afterAnswer(ok({ status: 'drawing' }), ctx('entry'))).toEqual({
      do: 'poll',
      poll: null,
      afterMs: 1000,
      status: { kind: 'drawing', text: 'Drawing the winners…' },
    });
    const won = flow.afterAnswer(ok({ reservationId: resId, status: 'queued' }), ctx('entry'));
    expect(won).toMatchObject({
      do: 'poll',
      poll: { kind: 'reservation', url: `/api/reservations/${resId}` },
      status: { kind: 'queued', holds: true },
    });
    const lost = flow.afterAnswer(ok({ status: 'lost' }), ctx('entry'));
    expect(lost).toEqual({
      do: 'stop',
      status: { kind: 'lost', text: 'Not drawn this time — every unit went to other entrants.' },
    });
  });

  it('an entry answer with a foreign poll URL or reservation id is refused, never fetched', () => {
    expect(flow.afterAnswer(ok({ status: 'entered', pollUrl: '/internal/x' }, 202), ctx('purchase')).status.kind).toBe(
      'try_later',
    );
    const foreign = flow.afterAnswer(ok({ reservationId: `999-${'ab'.repeat(16)}`, status: 'queued' }), ctx('entry'));
    expect(foreign.do).not.toBe('poll');
  });
});

describe('waiting room (docs/design.md §10 overflow "queue")', () => {
  const waiting = (position: number, etaSeconds: number, extra: Record<string, unknown> = {}) =>
    ok({ status: 'waiting', position, etaSeconds, pollUrl: waitUrl, pollAfterMs: 2000, ...extra }, 202);

  it('"You are number N in line — about M s" (N = buyers ahead + 1), counting down; polls at pollAfterMs', () => {
    const step = flow.afterAnswer(waiting(11, 30), ctx('purchase'));
    expect(step).toMatchObject({ do: 'poll', poll: { kind: 'waiting', url: waitUrl }, afterMs: 2000 });
    expect(step.status).toMatchObject({ kind: 'waiting', text: 'You are number 12 in line', until: now + 30_000 });
    expect(`${step.status.text} ${step.status.tick(30)}`).toBe('You are number 12 in line — about 30 s');
    expect(step.status.tick(27.4)).toBe('— about 28 s');
  });

  it('a poll may move the place on; then the result comes with no retry: a reservation, or sold out', () => {
    const moved = flow.afterAnswer(
      ok({ status: 'waiting', position: 3, etaSeconds: 6, pollAfterMs: 2000 }),
      ctx('waiting'),
    );
    expect([moved.do, moved.poll, moved.status.text]).toEqual(['poll', null, 'You are number 4 in line']);
    const turn = flow.afterAnswer(
      ok({ status: 'queued', reservationId: resId, pollUrl: `/api/reservations/${resId}` }, 202),
      ctx('waiting'),
    );
    expect(turn).toMatchObject({ do: 'poll', poll: { kind: 'reservation' }, status: { kind: 'queued' } });
    expect(flow.afterAnswer(err(409, 'sold_out'), ctx('waiting')).do).toBe('lookup');
  });

  it('polling too soon (429) waits Retry-After and polls the same place again; a dropped place (404) ends', () => {
    expect(flow.afterAnswer(err(429, 'rate_limited', 3), ctx('waiting'))).toEqual({
      do: 'poll',
      poll: null,
      afterMs: 3000,
      status: null,
    });
    expect(flow.afterAnswer(err(404, 'not_found'), ctx('waiting'))).toEqual({
      do: 'stop',
      status: { kind: 'try_later', text: 'Your place was lost; try again.' },
    });
  });

  it("pollAfterMs is clamped to at least 1 s (the edge's per-user poll rate); a purchase must name its poll URL", () => {
    expect(flow.afterAnswer(waiting(0, 0, { pollAfterMs: 10 }), ctx('purchase')).afterMs).toBe(1000);
    expect(
      flow.afterAnswer(ok({ status: 'waiting', position: 1, etaSeconds: 1 }, 202), ctx('purchase')).status.kind,
    ).toBe('try_later');
  });
});
