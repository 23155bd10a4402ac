/** Start-up configuration is validated with messages naming the variable; migrations apply once. */
import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { randomHex } from '../../../contract/ids.js';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_NAMES, loadConfig } from '../../../origin/platform/config.js';
import { migrate, SUPERSEDED_CHECKSUMS_FILE } from '../../../origin/platform/db/migrate.js';
import { MYSQL_SERVER_URL } from '../../helpers/db.js';

describe('configuration', () => {
  it('has working defaults for a dev machine', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 3000,
      REDIS_URL: 'redis://127.0.0.1:6379',
      MYSQL_URL: 'mysql://root@127.0.0.1:3306/seckill',
      REDIS_COMMAND_TIMEOUT_MS: 100,
    });
  });

  it('names the bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ REDIS_URL: 'http://x' })).toThrow(/REDIS_URL/);
    expect(() => loadConfig({ MYSQL_URL: 'postgres://x' })).toThrow(/MYSQL_URL/);
    expect(() => loadConfig({ SETTLE_MAX_DELIVERIES: '0' })).toThrow(/SETTLE_MAX_DELIVERIES/);
    expect(() => loadConfig({ ORIGIN_ROLE: 'everything' })).toThrow(/ORIGIN_ROLE/);
    expect(() => loadConfig({ EDGE_ORIGIN_SECRET: 'short' })).toThrow(/EDGE_ORIGIN_SECRET/);
  });

  it("keeps a rehearsal's order events from the real receiver", () => {
    const url = 'http://events.example:8080/orders';
    const secret = 'events-secret-0123456789abcdef';
    expect(() =>
      loadConfig({ ORDER_EVENTS_URL: url, SHADOW_ORDER_EVENTS_URL: url, ORDER_EVENTS_SECRET: secret }),
    ).toThrow(/SHADOW_ORDER_EVENTS_URL: must not be ORDER_EVENTS_URL/);
    expect(() => loadConfig({ SHADOW_ORDER_EVENTS_URL: url })).toThrow(/ORDER_EVENTS_SECRET/);
    expect(
      loadConfig({ ORDER_EVENTS_URL: url, SHADOW_ORDER_EVENTS_URL: `${url}-rehearsal`, ORDER_EVENTS_SECRET: secret })
        .SHADOW_ORDER_EVENTS_URL,
    ).toBe(`${url}-rehearsal`);
  });

  it('every setting is documented in docs/configuration.md', () => {
    const page = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
    expect(CONFIG_NAMES.filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
  });

  it('refuses dev default secrets in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/ADMIN_TOKEN/);
    const real = {
      ADMIN_TOKEN: 'a'.repeat(32),
      EDGE_ORIGIN_SECRET: 'b'.repeat(32),
      PAYMENT_WEBHOOK_SECRET: 'c'.repeat(32),
      METRICS_TOKEN: 'd'.repeat(32),
      DRAW_SECRET: 'e'.repeat(32),
    };
    expect(() => loadConfig({ NODE_ENV: 'production', ...real, EDGE_ORIGIN_SECRET: 'dev-edge-origin-secret' })).toThrow(
      /EDGE_ORIGIN_SECRET/,
    );
    expect(loadConfig({ NODE_ENV: 'production', ...real }).ADMIN_TOKEN).toBe(real.ADMIN_TOKEN);
  });
});

describe('migrate', () => {
  it('creates the database, applies every migration once, and records them', async () => {
    const name = `seckill_mig_${randomHex(5)}`;
    const url = `${MYSQL_SERVER_URL}/${name}`;
    try {
      const first = await migrate(url);
      expect(first.applied[0]).toBe('001_core_tables.sql');
      expect(first.skipped).toEqual([]);
      const second = await migrate(url);
      expect(second.applied).toEqual([]);
      expect(second.skipped).toEqual(first.applied);
      const conn = await mysql.createConnection({ uri: url });
      const [tables] = (await conn.query('SHOW TABLES')) as any;
      const names = tables.map((r: any) => Object.values(r)[0]);
      for (const t of [
        'seckill_activity',
        'seckill_stock',
        'seckill_order',
        'seckill_stock_log',
        'stock_sync_outbox',
        'seckill_dead_letter',
        'schema_migrations',
      ]) {
        expect(names).toContain(t);
      }
      const [idx] = (await conn.query(
        "SHOW INDEX FROM seckill_order WHERE Non_unique = 0 AND Key_name <> 'PRIMARY'",
      )) as any;
      expect(new Set(idx.map((r: any) => r.Key_name))).toEqual(
        new Set(['uk_activity_user_sku', 'uk_order_no', 'uk_reservation_id', 'uk_request_id']),
      );
      const [[count]] = (await conn.query('SELECT COUNT(*) AS n FROM schema_migrations')) as any;
      expect(Number(count.n)).toBe(first.applied.length);
      await conn.end();
    } finally {
      const conn = await mysql.createConnection({ uri: MYSQL_SERVER_URL });
      await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await conn.end();
    }
  });

  it('refuses an applied migration edited afterwards, unless only its comments changed and its earlier checksum is recorded', async () => {
    const name = `seckill_mig_${randomHex(5)}`;
    const url = `${MYSQL_SERVER_URL}/${name}`;
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    const first = '-- A table (old comment)\nCREATE TABLE t (id INT PRIMARY KEY);\n';
    const second = '-- A table (new comment)\nCREATE TABLE t (id INT PRIMARY KEY);\n';
    try {
      writeFileSync(join(dir, '001_t.sql'), first);
      expect((await migrate(url, dir)).applied).toEqual(['001_t.sql']);
      writeFileSync(join(dir, '001_t.sql'), second);
      await expect(migrate(url, dir)).rejects.toThrow(/001_t.sql was edited after it was applied/);
      const old = createHash('sha256').update(first).digest('hex');
      writeFileSync(join(dir, SUPERSEDED_CHECKSUMS_FILE), JSON.stringify({ '001_t.sql': [old] }));
      expect(await migrate(url, dir)).toMatchObject({ applied: [], skipped: ['001_t.sql'] });
      // The database now holds the new checksum: it no longer depends on the list.
      rmSync(join(dir, SUPERSEDED_CHECKSUMS_FILE));
      expect(await migrate(url, dir)).toMatchObject({ applied: [], skipped: ['001_t.sql'] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
      const conn = await mysql.createConnection({ uri: MYSQL_SERVER_URL });
      await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await conn.end();
    }
  });

  it('refuses a database name it cannot quote safely', async () => {
    await expect(migrate(`${MYSQL_SERVER_URL}/bad-name`)).rejects.toThrow(/MYSQL_URL must name a database/);
  });
});
