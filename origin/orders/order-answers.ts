/**
 * Counts every answer of `POST /internal/reserve` in `seckill_order_answers_total{outcome,decided}`:
 * the order endpoint's success rate is decided answers over all answers (docs/watching-a-sale.md).
 * The reserve chain (reservation/reserve-chain.ts) counts from its signature check on, so a secret
 * mismatch between edge and origin counts too.
 */
import type { Metrics } from '../platform/metrics.js';
import { toContractError } from '../platform/http/errors.js';

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

/**
 * Counts one answer: its outcome (the answer, else the error's contract code, else the status),
 * `timeout` when it took longer than `deadlineMs` since `startedMs` (performance.now()).
 */
export function countOrderAnswer(
  opts: { metrics: Metrics; deadlineMs: number },
  answer: { status: number; answer?: string; error?: unknown; startedMs: number; shadow?: boolean },
): void {
  let outcome =
    answer.answer ??
    (answer.error !== undefined ? (toContractError(answer.error)?.code ?? 'internal') : String(answer.status));
  if (performance.now() - answer.startedMs > opts.deadlineMs) outcome = 'timeout';
  // Shadow traffic (contract/shadow.ts) in its own series: a rehearsal never moves the real success rate.
  const counter = answer.shadow ? opts.metrics.shadowOrderAnswers : opts.metrics.orderAnswers;
  counter.inc({ outcome, decided: String(isDecided(outcome, answer.status)) });
}
