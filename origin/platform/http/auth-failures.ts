/**
 * Failed authentication at the origin: a wrong admin or metrics token, a forged or stale payment
 * webhook, a badly signed edge call. Each is a 401 `unauthenticated` thrown as an AuthFailure by the
 * check that refused it; the one error translator (errors.ts) counts it in
 * `seckill_origin_auth_failures_total{route, reason}` (both labels from fixed lists, so made-up
 * paths cannot grow the series) and logs it sampled: the first failure of a route at once, then at
 * most one line per AUTH_FAILURE_LOG_INTERVAL_MS with how many were not logged in between.
 */
import { ContractError } from '../../../contract/errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';

/** Which credential was refused: the route group that asks for it. */
export type AuthRoute = '/admin' | '/internal' | '/payments/callback' | '/metrics';
/** `missing`: no credential; `stale`: a signature outside its time window; `invalid`: a wrong token or signature. */
export type AuthFailureReason = 'missing' | 'stale' | 'invalid';

export class AuthFailure extends ContractError {
  constructor(
    readonly route: AuthRoute,
    readonly reason: AuthFailureReason,
    message: string,
  ) {
    super('unauthenticated', message);
  }
}

/** Longest request path written on a log line. */
const MAX_PATH_LOGGED = 200;

export class AuthFailureLog {
  private readonly lastLineAt = new Map<AuthRoute, number>();
  private readonly notLogged = new Map<AuthRoute, number>();

  constructor(
    private readonly deps: {
      metrics: Pick<Metrics, 'authFailures'>;
      /** AUTH_FAILURE_LOG_INTERVAL_MS: at most one line per route this often. */
      intervalMs: number;
    },
  ) {}

  record(failure: AuthFailure, where: { path: string; log: Logger }, now = Date.now()): void {
    const { route, reason } = failure;
    this.deps.metrics.authFailures.inc({ route, reason });
    const last = this.lastLineAt.get(route);
    if (last !== undefined && now - last < this.deps.intervalMs) {
      this.notLogged.set(route, (this.notLogged.get(route) ?? 0) + 1);
      return;
    }
    const notLoggedSinceLastLine = this.notLogged.get(route) ?? 0;
    this.lastLineAt.set(route, now);
    this.notLogged.set(route, 0);
    where.log.warn(
      { route, reason, path: where.path.slice(0, MAX_PATH_LOGGED), notLoggedSinceLastLine },
      'authentication failed',
    );
  }
}
