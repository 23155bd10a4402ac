// Every SQL statement of the origin lives in a store (`*-store.ts`) of its feature, or in one of the
// named exceptions below (docs/architecture.md, "Stores"). Reads the sources; no database.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Files that may hold SQL without being a store, and why. */
const EXCEPTIONS: Record<string, string> = {
  'origin/platform/db/migrate.ts': 'DDL: applies schema/ and records the migrations',
  'origin/platform/db/server-status.ts': 'the server itself: SELECT 1, SHOW GLOBAL STATUS, @@max_connections',
  'origin/platform/db/pool.ts':
    'the transaction helper: SET TRANSACTION, START / COMMIT / ROLLBACK, the session time zone',
};

const STATEMENT =
  /\b(SELECT\s+[\w*@(]|INSERT\s+INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b|REPLACE\s+INTO\b|GET_LOCK\(|SHOW\s+\w)/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The lines of code (not comments) that look like SQL. */
function sqlLines(text: string): string[] {
  const found: string[] = [];
  let inBlock = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (inBlock) {
      if (line.includes('*/')) inBlock = false;
      continue;
    }
    if (line.startsWith('/*')) {
      inBlock = !line.includes('*/');
      continue;
    }
    if (line.startsWith('//') || line.startsWith('*')) continue;
    if (STATEMENT.test(line)) found.push(line);
  }
  return found;
}

describe('SQL lives in stores', () => {
  it('no origin module outside a *-store.ts and the named exceptions writes a statement', () => {
    const offenders: Record<string, string[]> = {};
    for (const file of sources(join(ROOT, 'origin'))) {
      const path = relative(ROOT, file).split('\\').join('/');
      if (path.endsWith('-store.ts') || path in EXCEPTIONS) continue;
      const lines = sqlLines(readFileSync(file, 'utf8'));
      if (lines.length > 0) offenders[path] = lines;
    }
    expect(offenders).toEqual({});
  });

  it('the check finds a statement outside a store', () => {
    expect(sqlLines("  await db.query('SELECT id FROM seckill_order WHERE id = ?', [id]);")).toHaveLength(1);
    expect(sqlLines('   `UPDATE seckill_order SET status = 2`,')).toHaveLength(1);
    expect(sqlLines(' * A locking read (SELECT ... FOR UPDATE) in a comment is not a statement.')).toHaveLength(0);
  });
});
