/**
 * Applies schema/NNN_*.sql once each, in order, recording what it applied. Creates the database
 * named in MYSQL_URL when missing. A named lock keeps several origins from migrating at once.
 * An applied migration must not change; the one exception is an edit of its comments only, whose
 * earlier checksum is listed in schema/superseded-checksums.json (written by the tool that made the
 * edit): a database that applied the earlier text takes the new checksum and goes on.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import mysql from 'mysql2/promise';
import { projectPath } from '../paths.js';
import { one, rows } from './rows.js';

export const SCHEMA_DIR = projectPath('schema');
const LOCK_NAME = 'seckill_migrate';
const LOCK_TIMEOUT_S = 30;
/** File name → checksums of earlier texts of that migration that differed only in comments. */
export const SUPERSEDED_CHECKSUMS_FILE = 'superseded-checksums.json';

export interface MigrationResult {
  database: string;
  applied: string[];
  skipped: string[];
}

export function databaseOf(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]{1,64}$/.test(name))
    throw new Error(`MYSQL_URL must name a database ([A-Za-z0-9_]), got "${name}"`);
  return name;
}

export async function migrate(url: string, dir = SCHEMA_DIR): Promise<MigrationResult> {
  const database = databaseOf(url);
  const serverUrl = new URL(url);
  serverUrl.pathname = '/';
  const conn = await mysql.createConnection({ uri: serverUrl.toString(), multipleStatements: true });
  try {
    await conn.query(`CREATE DATABASE IF NOT EXISTS \`${database}\` CHARACTER SET utf8mb4`);
    await conn.query(`USE \`${database}\``);
    const lock = await one<{ got: number | null }>(
      conn.query('SELECT GET_LOCK(?, ?) AS got', [LOCK_NAME, LOCK_TIMEOUT_S]),
    );
    if (lock?.got !== 1) throw new Error('another migration holds the lock');
    try {
      await conn.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        name VARCHAR(200) NOT NULL PRIMARY KEY,
        checksum CHAR(64) NOT NULL,
        applied_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
      ) ENGINE = InnoDB`);
      const applied = await rows<{ name: string; checksum: string }>(
        conn.query('SELECT name, checksum FROM schema_migrations'),
      );
      const done = new Map<string, string>(applied.map((r) => [r.name, r.checksum]));
      const files = (await readdir(dir)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
      if (files.length === 0) throw new Error(`no migrations found in ${dir}`);
      const superseded = await supersededChecksums(dir);
      const result: MigrationResult = { database, applied: [], skipped: [] };
      for (const file of files) {
        const sql = await readFile(`${dir}/${file}`, 'utf8');
        const checksum = createHash('sha256').update(sql).digest('hex');
        const previous = done.get(file);
        if (previous) {
          if (previous !== checksum) {
            if (!superseded[file]?.includes(previous))
              throw new Error(`migration ${file} was edited after it was applied`);
            await conn.query('UPDATE schema_migrations SET checksum = ? WHERE name = ?', [checksum, file]);
          }
          result.skipped.push(file);
          continue;
        }
        await conn.query(sql);
        await conn.query('INSERT INTO schema_migrations (name, checksum) VALUES (?, ?)', [file, checksum]);
        result.applied.push(file);
      }
      return result;
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [LOCK_NAME]);
    }
  } finally {
    await conn.end();
  }
}

async function supersededChecksums(dir: string): Promise<Record<string, string[]>> {
  let text: string;
  try {
    text = await readFile(`${dir}/${SUPERSEDED_CHECKSUMS_FILE}`, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  return JSON.parse(text) as Record<string, string[]>;
}
