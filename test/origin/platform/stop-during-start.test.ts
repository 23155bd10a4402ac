/**
 * `npm run origin` (origin/main.ts) handles SIGTERM from the moment it starts: a stop asked for
 * while the start is still under way (here: its Redis answers nothing until we let it) waits for
 * the start, then drains and exits 0, instead of the process dying where it stands.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { TEST_SECRETS, waitFor } from '../../helpers/origin.js';
import { startPersistentRedis, type PersistentRedis } from '../../helpers/redis-server.js';

let db: TestDatabase;
let redis: PersistentRedis;

beforeAll(async () => {
  [db, redis] = await Promise.all([createTestDatabase(), startPersistentRedis('everysec')]);
});

afterAll(async () => {
  await Promise.all([db?.drop(), redis?.stop()]);
});

it('a SIGTERM during the start is honoured once the start is done: drained, exit 0', async () => {
  redis.freeze();
  const child = spawn(process.execPath, ['--import', 'tsx', 'origin/main.ts'], {
    env: {
      ...process.env,
      ...TEST_SECRETS,
      ORIGIN_ROLE: 'consumers',
      MYSQL_URL: db.url,
      REDIS_URL: redis.url,
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const messages: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    messages.push((JSON.parse(line) as { msg: string }).msg);
  });
  const seen = (msg: string) =>
    waitFor(
      async () => {
        if (messages.includes(msg)) return true;
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`origin ended (code ${child.exitCode}, signal ${child.signalCode}) before "${msg}"`);
        return false;
      },
      Boolean,
      30_000,
    );

  await seen('origin starting');
  child.kill('SIGTERM');
  await seen('stopping: draining in-flight work');
  // The start cannot have finished: Redis has not answered anything yet.
  expect(messages).not.toContain('origin started');
  redis.thaw();

  const [code, signal] = await exited;
  expect({ code, signal }).toEqual({ code: 0, signal: null });
  expect(messages).toContain('origin started');
  expect(messages.at(-1)).toBe('stopped');
}, 60_000);
