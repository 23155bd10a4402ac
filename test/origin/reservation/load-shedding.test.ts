/** Load shedding: beyond RESERVE_MAX_IN_FLIGHT, a reserve is refused at once with 503 busy. */
import { Hono } from 'hono';
import { expect, it } from 'vitest';
import { onError } from '../../../origin/platform/http/errors.js';
import { inFlightLimit } from '../../../origin/platform/http/middleware.js';
import type { OriginEnv } from '../../../origin/platform/http/types.js';

it('refuses the request above the limit with 503 busy + Retry-After, and admits again once one finishes', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let shed = 0;
  const app = new Hono<OriginEnv>();
  app.onError(onError);
  app.use('/reserve', inFlightLimit({ max: 2, onShed: () => shed++ }));
  app.post('/reserve', async (c) => {
    await gate;
    return c.json({ ok: true });
  });

  const first = app.request('/reserve', { method: 'POST' });
  const second = app.request('/reserve', { method: 'POST' });
  const third = await app.request('/reserve', { method: 'POST' });
  expect(third.status).toBe(503);
  expect(third.headers.get('retry-after')).toBe('1');
  expect(((await third.json()) as any).error).toBe('busy');
  expect(shed).toBe(1);

  release();
  expect((await first).status).toBe(200);
  expect((await second).status).toBe(200);
  expect((await app.request('/reserve', { method: 'POST' })).status).toBe(200);
});
