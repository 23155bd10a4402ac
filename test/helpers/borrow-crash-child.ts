/**
 * A process that dies in the middle of a borrow (the cluster crash test): it reserves for a user
 * whose home bucket is empty, and between taking the units from a donor bucket and confirming at
 * home it prints `TAKEN` and waits — the test SIGKILLs it there.
 * Usage: tsx borrow-crash-child.ts <clusterNodes> <activityId> <skuId> <buckets> <userId>
 */
import { createLogger } from '../../origin/platform/logger.js';
import { RedisStore } from '../../origin/redis/redis-store.js';

const [nodes, activityId, skuId, buckets, userId] = process.argv.slice(2) as [string, string, string, string, string];
const store = await RedisStore.connect({
  redis: { url: 'redis://unused', clusterNodes: nodes.split(',') },
  requestTimeoutMs: 2_000,
  opsTimeoutMs: 5_000,
  breaker: { failureThreshold: 100, openMs: 1_000 },
  log: createLogger('silent'),
  async afterBorrowTake() {
    process.stdout.write('TAKEN\n');
    await new Promise(() => {}); // until SIGKILL
  },
});
const result = await store.requests.reserve({
  activityId,
  skuId,
  buckets: Number(buckets),
  userId,
  quantity: 1,
  requestId: 'crash-child',
  traceId: '0'.repeat(32),
});
process.stdout.write(`DONE ${JSON.stringify(result)}\n`); // not expected: the home bucket had units
process.exit(0);
