/** `npm run origin`: HTTP + settlement consumers (ORIGIN_ROLE picks a part). Stops cleanly on SIGTERM/SIGINT. */
import { ConfigError, loadConfig } from './platform/config.js';
import { createLogger } from './platform/logger.js';
import { startOrigin } from './server.js';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.LOG_LEVEL);
  // The signal handlers go in before the start: a start can take a while (connections, the first
  // discovery of sales) while consumers already settle, and a SIGTERM then must drain them, not kill
  // the process where it stands. A stop asked for during the start waits for the start to finish.
  const started = startOrigin(config, log);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping: draining in-flight work');
    const force = setTimeout(() => {
      log.error('grace period over; exiting with work abandoned (uncommitted transactions roll back)');
      process.exit(1);
    }, config.SHUTDOWN_GRACE_MS);
    force.unref();
    started
      .then((origin) => origin.stop())
      .then(
        () => {
          log.info('stopped');
          process.exit(0);
        },
        (err) => {
          log.error({ err }, 'stop failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  log.info({ role: config.ORIGIN_ROLE }, 'origin starting');
  await started;
}

main().catch((err: Error) => {
  console.error(`origin failed to start: ${err.message}`);
  process.exit(1);
});
