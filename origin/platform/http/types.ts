import type { Logger } from '../logger.js';
import type { AuthFailureLog } from './auth-failures.js';

export type OriginEnv = {
  Variables: {
    traceId: string;
    log: Logger;
    /** The logger `log` is a child of (a trace adopted after authentication gets its own child). */
    baseLog: Logger;
    /** Where a refused credential is counted and logged (set for every request by the app). */
    authFailures: AuthFailureLog;
    /** The raw request body, read once (signature checks need the exact bytes). */
    rawBody: string;
    /** The admin operator whose token authenticated the request (`admin` for the shared ADMIN_TOKEN). */
    operator: string;
  };
};
