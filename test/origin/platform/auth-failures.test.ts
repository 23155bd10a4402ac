/**
 * Failed authentication at the origin is seen: wrong admin tokens, forged payment webhooks and badly
 * signed edge calls are counted on /metrics by route and reason, and logged sampled (a route's
 * first failure, then at most one line per AUTH_FAILURE_LOG_INTERVAL_MS).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentHeaders } from '../../helpers/lifecycle.js';
import { startTestOrigin, type TestOrigin } from '../../helpers/origin.js';

interface LogLine {
  msg: string;
  route?: string;
  reason?: string;
  notLoggedSinceLastLine?: number;
}
const lines: LogLine[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const text of chunk.toString().split('\n')) if (text) lines.push(JSON.parse(text) as LogLine);
    done();
  },
});
const failedLines = (route: string) => lines.filter((l) => l.msg === 'authentication failed' && l.route === route);

let t: TestOrigin;
beforeAll(async () => {
  // An hour between lines: each route logs exactly its first failure during the test.
  t = await startTestOrigin({ AUTH_FAILURE_LOG_INTERVAL_MS: '3600000' }, undefined, {
    log: pino({ level: 'info' }, sink),
  });
});
afterAll(async () => {
  await t?.stop();
});

async function failures(route: string, reason: string): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`seckill_origin_auth_failures_total{route="${route}",reason="${reason}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

const times = <T>(n: number, make: (i: number) => Promise<T>) =>
  Promise.all(Array.from({ length: n }, (_, i) => make(i)));

describe('failed authentication at the origin', () => {
  it('100 wrong admin tokens move the auth counter by 100 and write one log line', async () => {
    const before = await failures('/admin', 'invalid');
    const answers = await times(100, (i) => t.admin('GET', '/admin/activities', undefined, `wrong-token-${i}`));
    expect(answers.map((r) => r.status)).toEqual(Array(100).fill(401));
    expect((await failures('/admin', 'invalid')) - before).toBe(100);
    const missing = await fetch(`${t.url}/admin/activities`);
    expect(missing.status).toBe(401);
    expect(await failures('/admin', 'missing')).toBe(1);
    expect(failedLines('/admin')).toHaveLength(1);
    expect(failedLines('/admin')[0]).toMatchObject({ reason: 'invalid', notLoggedSinceLastLine: 0 });
  });

  it('100 forged payment webhooks and 100 stale ones are counted apart', async () => {
    const body = JSON.stringify({ orderNo: 'A'.repeat(24), paymentId: 'p1', status: 'paid' });
    const forged = await times(100, () =>
      fetch(`${t.url}/payments/callback`, {
        method: 'POST',
        headers: paymentHeaders(body, String(Date.now()), 'not-the-payment-secret-0123456789'),
        body,
      }),
    );
    expect(forged.map((r) => r.status)).toEqual(Array(100).fill(401));
    const stale = await times(100, () =>
      fetch(`${t.url}/payments/callback`, {
        method: 'POST',
        headers: paymentHeaders(body, String(Date.now() - 3_600_000)),
        body,
      }),
    );
    expect(stale.map((r) => r.status)).toEqual(Array(100).fill(401));
    expect(await failures('/payments/callback', 'invalid')).toBe(100);
    expect(await failures('/payments/callback', 'stale')).toBe(100);
    expect(failedLines('/payments/callback')).toHaveLength(1);
  });

  it('100 badly signed edge calls, on the reserve fast path and the other internal routes', async () => {
    const bad = { 'x-edge-signature': `v1=${'0'.repeat(64)}` };
    const reserves = await times(50, (i) =>
      t.internal(
        'POST',
        '/internal/reserve',
        { activityId: '1', userId: '1', quantity: 1, requestId: `bad-${i}` },
        { headers: bad },
      ),
    );
    const others = await times(50, () => t.internal('GET', '/internal/activities/1', undefined, { headers: bad }));
    expect([...reserves, ...others].map((r) => r.status)).toEqual(Array(100).fill(401));
    expect(await failures('/internal', 'invalid')).toBe(100);
    expect(failedLines('/internal')).toHaveLength(1);
    expect(failedLines('/internal')[0]).toMatchObject({ reason: 'invalid' });
  });

  it('made-up paths do not add series: the labels are route groups and reasons', async () => {
    await times(20, (i) => t.admin('GET', `/admin/activities/${i}${'x'.repeat(i)}`, undefined, 'wrong'));
    const text = await (await fetch(`${t.url}/metrics`)).text();
    const series = text.split('\n').filter((l) => l.startsWith('seckill_origin_auth_failures_total{'));
    expect(series.length).toBeLessThanOrEqual(4 * 3);
    expect(await failures('/admin', 'invalid')).toBe(120);
  });
});
