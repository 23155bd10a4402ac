/** The request log: own trace ids, doomed refusals counted and sampled, not logged one by one. */
import { SELF, env } from 'cloudflare:test';
import { Hono } from 'hono';
import { describe, expect, it, vi } from 'vitest';
import { ContractError } from '../../../contract/index.js';
import type { EdgeEnv } from '../../../edge/context.js';
import { onError } from '../../../edge/errors.js';
import { requestLog } from '../../../edge/middleware/request-log.js';
import { BASE, openActivity } from '../support.js';

function appWith(sample: number) {
  const lines: Record<string, unknown>[] = [];
  const app = new Hono<EdgeEnv>();
  app.use(requestLog({ log: (line) => lines.push(JSON.parse(line)), sample: () => sample }));
  app.get('/sold-out', () => {
    throw new ContractError('sold_out', 'sold out');
  });
  app.get('/ok', (c) => c.json({ ok: true }));
  app.get('/bad', (c) => {
    if (c.req.query('user')) c.set('userId', c.req.query('user')!);
    throw new ContractError('bad_request', 'malformed');
  });
  app.onError(onError);
  return { app, lines };
}

describe('request log', () => {
  it('doomed refusals are counted; one in N is logged with the counts since the last line', async () => {
    const { app, lines } = appWith(5);
    for (let i = 0; i < 10; i++) {
      const res = await app.request('/sold-out', {}, env);
      expect(res.status).toBe(409);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toEqual({ error: 'sold_out', message: 'sold out', traceId: res.headers.get('x-trace-id') });
    }
    expect(lines.length).toBe(2);
    const counted = lines.map((l) => (l.refusalsSinceLastSample as Record<string, number>).sold_out);
    expect(counted.reduce((a, b) => a! + b!, 0)).toBe(10);
    // Everything else is still one line per request.
    await app.request('/ok', {}, env);
    await app.request('/ok', {}, env);
    expect(lines.length).toBe(4);
    expect(lines[3]).toMatchObject({ path: '/ok', status: 200, outcome: 'ok' });
  });

  it("mints the trace id; a client's traceparent is logged beside it, never used as it", async () => {
    const { app, lines } = appWith(1);
    const clientTrace = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const res = await app.request('/ok', { headers: { traceparent: clientTrace } }, env);
    const traceId = res.headers.get('x-trace-id');
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(lines[0]).toMatchObject({ traceId, clientTraceparent: clientTrace });
  });

  it("400s from a caller not yet authenticated are sampled like doomed refusals; an authenticated user's 400 is logged", async () => {
    const { app, lines } = appWith(5);
    for (let i = 0; i < 10; i++) expect((await app.request('/bad', {}, env)).status).toBe(400);
    expect(lines.length).toBe(2);
    expect(lines.map((l) => (l.refusalsSinceLastSample as Record<string, number>).bad_request)).toEqual([5, 5]);
    for (let i = 0; i < 3; i++) await app.request('/bad?user=42', {}, env);
    expect(lines.length).toBe(5);
    expect(lines[4]).toMatchObject({ status: 400, outcome: 'bad_request', userId: '42' });
  });
});

describe('request log of the Worker (unauthenticated 400s)', () => {
  /** The Worker's JSON log lines written while `work` runs, with its outcome. */
  async function linesDuring(work: () => Promise<void>): Promise<Record<string, unknown>[]> {
    const spy = vi.spyOn(console, 'log');
    try {
      await work();
      return spy.mock.calls.flatMap(([line]) => {
        try {
          return typeof line === 'string' && line.startsWith('{') ? [JSON.parse(line)] : [];
        } catch {
          return [];
        }
      });
    } finally {
      spy.mockRestore();
    }
  }

  it('100 bad activity ids and 100 bad Idempotency-Keys write at most one line each burst (REFUSAL_LOG_SAMPLE 1000)', async () => {
    const badIds = await linesDuring(async () => {
      for (let i = 0; i < 100; i++) {
        const res = await SELF.fetch(`${BASE}/api/activities/not-an-id-${i}`);
        expect(res.status).toBe(400);
        await res.arrayBuffer();
      }
    });
    expect(badIds.filter((l) => l.outcome === 'bad_request' && !l.refusalsSinceLastSample)).toEqual([]);
    expect(badIds.length).toBeLessThanOrEqual(1);

    const activityId = await openActivity();
    const badKeys = await linesDuring(async () => {
      for (let i = 0; i < 100; i++) {
        const res = await SELF.fetch(`${BASE}/api/activities/${activityId}/purchase?t=x`, {
          method: 'POST',
          headers: { 'idempotency-key': `bad key ${i}`, 'content-type': 'application/json' },
          body: '{"quantity":1}',
        });
        expect(res.status).toBe(400);
        await res.arrayBuffer();
      }
    });
    expect(badKeys.filter((l) => l.outcome === 'bad_request' && !l.refusalsSinceLastSample)).toEqual([]);
    expect(badKeys.length).toBeLessThanOrEqual(1);
  });
});
