/**
 * The failover watch's first rounds after start-up (origin/redis/replication-watch.ts): its own
 * fail-fast connection is still connecting then, and a question sent before it is up used to read
 * "cannot tell which primary serves these buckets" for every sale — a warning with nothing wrong.
 */
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestOrigin, type TestOrigin } from '../../helpers/origin.js';

const lines: { msg: string }[] = [];
const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });

let first: TestOrigin | undefined;
let t: TestOrigin | undefined;
afterAll(async () => {
  await t?.stop();
  await first?.stop();
});

describe('failover watch at start-up', () => {
  it('asks once its connection is up: no "cannot tell" warning while Redis is fine', async () => {
    // A second origin starts while a warmed sale is registered, so its very first round has a sale
    // to ask about.
    first = await startTestOrigin({ FAILOVER_POLL_MS: '20' });
    await first.sale({ stock: 5 });
    t = await startTestOrigin({ FAILOVER_POLL_MS: '20' }, first.db, { log });
    expect(lines.filter((l) => l.msg === 'origin started')).toHaveLength(1);
    // Enough 20 ms rounds to have asked about every registered sale many times.
    await new Promise((r) => setTimeout(r, 500));
    expect(lines.filter((l) => l.msg.startsWith('failover:'))).toEqual([]);
  });
});
