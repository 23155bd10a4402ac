/**
 * `npm run report -- --activity <id>`: prints the end-of-sale report as JSON; exit 1 when
 * reconciliation fails. Reads MYSQL_URL / REDIS_URL / REDIS_KEY_PREFIX like the origin: a failure
 * names where it looked (no password), since the usual mistake is reading another stack's database.
 */
import { parseArgs } from 'node:util';
import { isId } from '../contract/ids.js';
import { ConfigError, loadConfig } from './platform/config.js';
import { buildOriginParts } from './parts.js';
import { saleReport } from './operator/report.js';
import { createLogger } from './platform/logger.js';

let where = '';

/** `database seckill on 127.0.0.1:3306, Redis 127.0.0.1:6379` — never the credentials. */
function describeStores(mysqlUrl: string, redisUrl: string, prefix: string): string {
  const m = new URL(mysqlUrl);
  const r = new URL(redisUrl);
  const keys = prefix ? ` (key prefix ${prefix})` : '';
  return `database ${m.pathname.slice(1) || '(none)'} on ${m.host}, Redis ${r.host}${keys}`;
}

async function main() {
  const { values } = parseArgs({ options: { activity: { type: 'string' } } });
  if (!isId(values.activity)) {
    console.error('usage: npm run report -- --activity <activityId>');
    process.exit(2);
  }
  const config = loadConfig({ LOG_LEVEL: 'silent', ...process.env });
  where = describeStores(config.MYSQL_URL, config.REDIS_URL, config.REDIS_KEY_PREFIX);
  const parts = await buildOriginParts(config, createLogger(config.LOG_LEVEL));
  try {
    const report = await saleReport(
      { db: parts.db, ledger: parts.redis.ledger, config: parts.config },
      values.activity,
    );
    console.log(JSON.stringify(report, null, 2));
    process.exitCode = report.reconciliation.ok ? 0 : 1;
  } finally {
    await parts.close();
  }
}

main().catch((err) => {
  const hint = where ? ` — read ${where}; set MYSQL_URL / REDIS_URL (/ REDIS_KEY_PREFIX) as the origin has them` : '';
  console.error(err instanceof ConfigError ? err.message : `report failed: ${(err as Error).message}${hint}`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
