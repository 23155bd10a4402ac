/**
 * The answer to a validated, authenticated `POST /internal/reserve`, the last step of the reserve
 * chain (reserve-chain.ts): a lottery entry, a new reservation (202), or a repeat with where the
 * reservation stands now (200), the statuses of the contract's table of outcomes
 * (contract/reserve-outcomes.ts).
 */
import type { ReserveRequest, ReserveResponse, EntryResponse } from '../../contract/reservation.js';
import { RESERVE_OUTCOMES } from '../../contract/reserve-outcomes.js';
import type { OriginConfig } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import { lotteryPurchase, type LotteryEntryDeps } from '../lottery/entry.js';
import { assertShadowMatch, reserve, type ReserveDeps } from './reserve.js';
import { reservationStatus, type ReservationStatusDeps } from './status.js';

/**
 * What answering a reserve uses: the lottery entry, the reserve decision and, for a repeat, the
 * reservation lookup; the process logger only to ask whether debug lines are wanted.
 */
export interface ReserveAnswerDeps extends ReserveDeps, LotteryEntryDeps, ReservationStatusDeps {
  requests: ReserveDeps['requests'] & ReservationStatusDeps['requests'];
  log: Logger;
  config: Pick<OriginConfig, 'REPEAT_STATUS_TIMEOUT_MS'>;
}

export interface ReserveAnswer {
  status: 200 | 202;
  body: ReserveResponse | EntryResponse;
  /** What was answered: a new or repeated entry or reservation. */
  answer: 'entered' | 'entered_again' | 'reserved' | 'repeat';
}

/** A lottery purchase, once the shadow check (the reserve's own, reserve.ts) passed. */
async function lotteryEntry(deps: ReserveAnswerDeps, req: ReserveRequest) {
  assertShadowMatch(await deps.catalog.resolve(req.activityId), req);
  return lotteryPurchase(deps, req);
}

/**
 * @param traceId the request's (the edge's, once its signature is checked); the body's, when sent, wins.
 * @param log the request's logger, asked for only when a line is written (most reserves write none,
 *   so most need no child logger).
 */
export async function answerReserve(
  deps: ReserveAnswerDeps,
  req: ReserveRequest,
  traceId: string,
  log: () => Logger,
): Promise<ReserveAnswer> {
  // Lottery activities (docs/design.md §10): an entry inside the window, `busy` while the draw runs.
  // An activity already known to be FCFS skips the step without a promise.
  const entry = deps.admission.isFcfs(req.activityId) ? null : await lotteryEntry(deps, req);
  if (entry) {
    log().info({ activityId: req.activityId, userId: req.userId, entryId: entry.body.entryId }, 'enter');
    return { status: entry.status, body: entry.body, answer: entry.status === 202 ? 'entered' : 'entered_again' };
  }
  // The edge's trace id wins over the header's only when it sent one in the body.
  const result = await reserve(deps, req, req.traceId ?? traceId);
  // One line per reserve only at debug: at info it cost the hot path a JSON line per request.
  // Outcomes are counted in seckill_reserve_total (reserve.ts); failures still log at warn.
  if (deps.log.isLevelEnabled('debug'))
    log().debug(
      { activityId: req.activityId, userId: req.userId, reservationId: result.reservationId, created: result.created },
      'reserve',
    );
  const queued = { status: 'queued' as const, reservationId: result.reservationId };
  if (result.created) return { status: RESERVE_OUTCOMES.reserved.status, body: queued, answer: 'reserved' };
  // A repeat answers where the reservation stands now (ordered, paid, …), not a stale "queued".
  // The lookup is best effort and bounded: the reserve path stays fast while settlement keeps MySQL
  // busy, and a repeat never fails because of it — the pollUrl tells the rest.
  let timer: NodeJS.Timeout | undefined;
  const current = await Promise.race([
    reservationStatus(deps, result.reservationId, req.userId).catch((err) => {
      log().warn({ err: (err as Error).message, reservationId: result.reservationId }, 'repeat status lookup failed');
      return queued;
    }),
    new Promise<typeof queued>(
      (resolve) => (timer = setTimeout(resolve, deps.config.REPEAT_STATUS_TIMEOUT_MS, queued)),
    ),
  ]).finally(() => clearTimeout(timer));
  return { status: RESERVE_OUTCOMES.repeat.status, body: current, answer: 'repeat' };
}
