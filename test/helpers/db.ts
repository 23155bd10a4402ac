/** A migrated database of its own for each test file; dropped at the end. */
import mysql from 'mysql2/promise';
import { randomHex } from '../../contract/ids.js';
import { migrate } from '../../origin/platform/db/migrate.js';

export const MYSQL_SERVER_URL = process.env.TEST_MYSQL_SERVER_URL ?? 'mysql://root@127.0.0.1:3306';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestDatabase {
  url: string;
  name: string;
  pool: mysql.Pool;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `seckill_test_${randomHex(6)}`;
  const url = `${MYSQL_SERVER_URL}/${name}`;
  await migrate(url);
  const pool = mysql.createPool({
    uri: url,
    connectionLimit: 4,
    supportBigNumbers: true,
    bigNumberStrings: true,
    timezone: 'Z',
  });
  return {
    url,
    name,
    pool,
    async drop() {
      await pool.end();
      const conn = await mysql.createConnection({ uri: MYSQL_SERVER_URL });
      await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await conn.end();
    },
  };
}

export async function scalar(pool: mysql.Pool, sql: string, params: unknown[] = []): Promise<number> {
  const [rows] = (await pool.query(sql, params)) as any;
  return Number(Object.values(rows[0])[0]);
}
