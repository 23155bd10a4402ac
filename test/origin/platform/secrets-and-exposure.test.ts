/**
 * Secrets and exposure: public dev default secrets only on a loopback-bound dev origin (or with
 * ALLOW_DEV_SECRETS=1); ≥ 32-character secrets in production; /metrics and /healthz behind
 * METRICS_TOKEN or on their own METRICS_PORT listener, so the main listener can carry the payment
 * webhook alone.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../origin/platform/config.js';
import { startTestOrigin } from '../../helpers/origin.js';

const LONG = {
  ADMIN_TOKEN: 'a'.repeat(32),
  EDGE_ORIGIN_SECRET: 'b'.repeat(32),
  PAYMENT_WEBHOOK_SECRET: 'c'.repeat(32),
  METRICS_TOKEN: 'd'.repeat(32),
  DRAW_SECRET: 'e'.repeat(32),
};

describe('dev default secrets', () => {
  it('are refused on a non-loopback HOST outside production, naming the variable', () => {
    expect(() => loadConfig({ HOST: '0.0.0.0' })).toThrow(
      /ADMIN_TOKEN: is the public dev default.*ALLOW_DEV_SECRETS=1/,
    );
    expect(() => loadConfig({ HOST: '10.0.0.5', ...LONG, PAYMENT_WEBHOOK_SECRET: undefined })).toThrow(
      /PAYMENT_WEBHOOK_SECRET: is the public dev default/,
    );
  });

  it('are allowed on loopback, or anywhere with ALLOW_DEV_SECRETS=1 outside production', () => {
    for (const HOST of ['127.0.0.1', 'localhost', '::1', '127.0.0.2'])
      expect(loadConfig({ HOST }).ADMIN_TOKEN).toBe('dev-admin-token');
    expect(loadConfig({ HOST: '0.0.0.0', ALLOW_DEV_SECRETS: '1' }).ADMIN_TOKEN).toBe('dev-admin-token');
  });

  it('are refused in production even on loopback and with ALLOW_DEV_SECRETS=1', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', ALLOW_DEV_SECRETS: '1' })).toThrow(/ADMIN_TOKEN/);
    expect(() => loadConfig({ NODE_ENV: 'production', ...LONG, EDGE_ORIGIN_SECRET: 'dev-edge-origin-secret' })).toThrow(
      /EDGE_ORIGIN_SECRET/,
    );
  });

  it('DRAW_SECRET (the key of every lottery seed): its public dev default is refused off loopback and in production', () => {
    expect(() => loadConfig({ HOST: '0.0.0.0', ...LONG, DRAW_SECRET: undefined })).toThrow(
      /DRAW_SECRET: is the public dev default/,
    );
    expect(() => loadConfig({ NODE_ENV: 'production', ...LONG, DRAW_SECRET: undefined })).toThrow(/DRAW_SECRET/);
    expect(() => loadConfig({ ...LONG, DRAW_SECRET: 'short' })).toThrow(/DRAW_SECRET/);
    expect(loadConfig({ HOST: '0.0.0.0', ...LONG }).DRAW_SECRET).toBe(LONG.DRAW_SECRET);
  });

  it('production requires every secret to have at least 32 characters', () => {
    for (const name of Object.keys(LONG))
      expect(() => loadConfig({ NODE_ENV: 'production', ...LONG, [name]: 'x'.repeat(31) })).toThrow(
        new RegExp(`${name}: must be at least 32 characters in production`),
      );
    expect(loadConfig({ NODE_ENV: 'production', ...LONG }).ADMIN_TOKEN).toBe(LONG.ADMIN_TOKEN);
  });

  it('a non-loopback HOST needs 32-character secrets in any NODE_ENV (an 8-character ADMIN_TOKEN on 0.0.0.0 is refused)', () => {
    for (const NODE_ENV of ['development', 'test', 'staging']) {
      expect(() => loadConfig({ NODE_ENV, HOST: '0.0.0.0', ...LONG, ADMIN_TOKEN: 'abcdefgh' })).toThrow(
        /ADMIN_TOKEN: must be at least 32 characters when HOST=0\.0\.0\.0 is not loopback/,
      );
      expect(() => loadConfig({ NODE_ENV, HOST: '10.0.0.5', ...LONG, EDGE_ORIGIN_SECRET: 'e'.repeat(31) })).toThrow(
        /EDGE_ORIGIN_SECRET: must be at least 32 characters/,
      );
      expect(loadConfig({ NODE_ENV, HOST: '0.0.0.0', ...LONG }).ADMIN_TOKEN).toBe(LONG.ADMIN_TOKEN);
    }
    // On loopback a short token stays a dev convenience; ALLOW_DEV_SECRETS=1 is the operator's explicit opt-in.
    expect(loadConfig({ HOST: '127.0.0.1', ADMIN_TOKEN: 'abcdefgh' }).ADMIN_TOKEN).toBe('abcdefgh');
    expect(loadConfig({ HOST: '0.0.0.0', ALLOW_DEV_SECRETS: '1', ADMIN_TOKEN: 'abcdefgh' }).ADMIN_TOKEN).toBe(
      'abcdefgh',
    );
  });

  it('the origin process refuses to start with a message naming the variable', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'origin/main.ts'], {
      env: { PATH: process.env.PATH, HOST: '0.0.0.0', PORT: '0' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('ADMIN_TOKEN: is the public dev default');
  });
});

describe('/metrics and /healthz', () => {
  it('an origin beside the world (non-loopback, real secrets) needs METRICS_TOKEN or METRICS_PORT', () => {
    const { METRICS_TOKEN: _t, ...secrets } = LONG;
    expect(() => loadConfig({ HOST: '0.0.0.0', ...secrets })).toThrow(/METRICS_TOKEN: set it \(or METRICS_PORT/);
    expect(loadConfig({ HOST: '0.0.0.0', ...secrets, METRICS_PORT: '9464' }).METRICS_HOST).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0', ...LONG }).METRICS_TOKEN).toBe(LONG.METRICS_TOKEN);
  });

  it('a METRICS_PORT listener on a non-loopback METRICS_HOST needs METRICS_TOKEN', () => {
    const { METRICS_TOKEN: _t, ...secrets } = LONG;
    const open = { ...secrets, METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' };
    expect(() => loadConfig({ NODE_ENV: 'production', ...open })).toThrow(
      /METRICS_TOKEN: required when METRICS_HOST=0\.0\.0\.0 is not loopback$/,
    );
    expect(() => loadConfig({ HOST: '0.0.0.0', ...open })).toThrow(
      /METRICS_TOKEN: required when METRICS_HOST=0\.0\.0\.0/,
    );
    expect(() => loadConfig({ ...open })).toThrow(/METRICS_TOKEN: required when METRICS_HOST=0\.0\.0\.0/);
    expect(loadConfig({ NODE_ENV: 'production', ...open, METRICS_TOKEN: LONG.METRICS_TOKEN }).METRICS_HOST).toBe(
      '0.0.0.0',
    );
    expect(loadConfig({ NODE_ENV: 'production', ...open, METRICS_HOST: '127.0.0.1' }).METRICS_TOKEN).toBeUndefined();
    expect(loadConfig({ ...open, ALLOW_DEV_SECRETS: '1' }).METRICS_TOKEN).toBeUndefined();
  });

  it('with METRICS_TOKEN, both need the bearer token', async () => {
    const t = await startTestOrigin({ ORIGIN_ROLE: 'http', METRICS_TOKEN: LONG.METRICS_TOKEN });
    try {
      for (const path of ['/metrics', '/healthz']) {
        const open = await fetch(t.url + path);
        expect(open.status).toBe(401);
        expect(((await open.json()) as any).error).toBe('unauthenticated');
        const wrong = await fetch(t.url + path, { headers: { authorization: `Bearer ${'e'.repeat(32)}` } });
        expect(wrong.status).toBe(401);
        await wrong.arrayBuffer();
        const ok = await fetch(t.url + path, { headers: { authorization: `Bearer ${LONG.METRICS_TOKEN}` } });
        expect(ok.status).toBe(200);
        await ok.arrayBuffer();
      }
    } finally {
      await t.stop();
    }
  });

  it('with METRICS_PORT, they move to their own loopback listener and the main one serves neither', async () => {
    const t = await startTestOrigin({ ORIGIN_ROLE: 'http', METRICS_PORT: '0' });
    try {
      const metricsUrl = t.origin.metricsUrl!;
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(metricsUrl).not.toBe(t.url);
      for (const path of ['/metrics', '/healthz']) {
        const main = await fetch(t.url + path);
        expect(main.status).toBe(404);
        await main.arrayBuffer();
        const own = await fetch(metricsUrl + path);
        expect(own.status).toBe(200);
        await own.arrayBuffer();
      }
      expect(await (await fetch(metricsUrl + '/metrics')).text()).toContain('seckill_reserve');
      // The webhook stays on the main listener, and nothing else is on the metrics one.
      const webhook = await fetch(t.url + '/payments/callback', { method: 'POST', body: '{}' });
      expect(webhook.status).toBe(401);
      await webhook.arrayBuffer();
      const elsewhere = await fetch(metricsUrl + '/payments/callback', { method: 'POST', body: '{}' });
      expect(elsewhere.status).toBe(404);
      await elsewhere.arrayBuffer();
    } finally {
      await t.stop();
    }
  });
});
