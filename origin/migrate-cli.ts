/** `npm run migrate`: creates the database from MYSQL_URL if missing and applies pending migrations. */
import { loadConfig } from './platform/config.js';
import { migrate } from './platform/db/migrate.js';

const config = loadConfig();
migrate(config.MYSQL_URL)
  .then((r) => {
    console.log(
      `migrated ${r.database}: applied ${r.applied.length ? r.applied.join(', ') : 'nothing'}` +
        (r.skipped.length ? ` (already applied: ${r.skipped.length})` : ''),
    );
  })
  .catch((err: Error) => {
    console.error(`migrate failed: ${err.message}`);
    process.exitCode = 1;
  });
