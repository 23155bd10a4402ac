/** `npm run report -- --activity <id>`: prints the end-of-sale report as JSON; exit 1 when reconciliation fails. */
import { parseArgs } from 'node:util';
import { isId } from '../contract/ids.js';
import { ConfigError, loadConfig } from './config.js';
import { createOriginContext } from './context.js';
import { saleReport } from './lifecycle/report.js';
import { createLogger } from './logger.js';

async function main() {
  const { values } = parseArgs({ options: { activity: { type: 'string' } } });
  if (!isId(values.activity)) {
    console.error('usage: npm run report -- --activity <activityId>');
    process.exit(2);
  }
  const config = loadConfig({ LOG_LEVEL: 'silent', ...process.env });
  const ctx = await createOriginContext(config, createLogger(config.LOG_LEVEL));
  try {
    const report = await saleReport(ctx, values.activity);
    console.log(JSON.stringify(report, null, 2));
    process.exitCode = report.reconciliation.ok ? 0 : 1;
  } finally {
    await ctx.close();
  }
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : `report failed: ${(err as Error).message}`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
