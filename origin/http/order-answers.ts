/**
 * Counts every answer of `POST /internal/reserve` in `seckill_order_answers_total{outcome,decided}`:
 * the order endpoint's success rate is decided answers over all answers (docs/watching-a-sale.md).
 * Registered before the signature check, so a secret mismatch between edge and origin counts too.
 */
import type { MiddlewareHandler } from 'hono';
import type { Metrics } from '../metrics.js';
import { toContractError } from './errors.js';
import type { OriginEnv } from './types.js';

/**
 * A decided answer tells the buyer where the purchase stands: reserved, a repeat of their
 * reservation, an entry into a lottery, or a refusal that is the sale working as designed (sold
 * out, fewer units left, above the limit, paused or ended by the operator, unknown sale, bad
 * request, …). Undecided: the origin could not decide — a 5xx (`unavailable`, `busy`, `not_ready`,
 * `internal`), a request it could not trust (`unauthenticated`: the edge's secret does not match),
 * or an answer slower than the edge waits (`timeout`: the buyer got the edge's 503 instead).
 * `paused` is a 503 but the operator's decision, so it is decided.
 */
export function isDecided(outcome: string, status: number): boolean {
  if (outcome === 'timeout' || outcome === 'unauthenticated') return false;
  if (outcome === 'paused') return true;
  return status < 500;
}

export function countOrderAnswers(opts: { metrics: Metrics; deadlineMs: number }): MiddlewareHandler<OriginEnv> {
  return async function countOrderAnswers(c, next) {
    const started = performance.now();
    await next();
    const status = c.res.status;
    let outcome = c.get('answer') ?? (c.error ? (toContractError(c.error)?.code ?? 'internal') : String(status));
    if (performance.now() - started > opts.deadlineMs) outcome = 'timeout';
    opts.metrics.orderAnswers.inc({ outcome, decided: String(isDecided(outcome, status)) });
  };
}
