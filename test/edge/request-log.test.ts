/** The request log (issue 13, 8.7): own trace ids, doomed refusals counted and sampled, not logged one by one. */
import { env } from 'cloudflare:test';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { ContractError } from '../../contract/index.js';
import type { EdgeEnv } from '../../edge/context.js';
import { onError } from '../../edge/errors.js';
import { requestLog } from '../../edge/middleware/request-log.js';

function appWith(sample: number) {
  const lines: Record<string, unknown>[] = [];
  const app = new Hono<EdgeEnv>();
  app.use(requestLog({ log: (line) => lines.push(JSON.parse(line)), sample: () => sample }));
  app.get('/sold-out', () => {
    throw new ContractError('sold_out', 'sold out');
  });
  app.get('/ok', (c) => c.json({ ok: true }));
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
});
