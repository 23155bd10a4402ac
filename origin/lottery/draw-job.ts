/**
 * Runs the lottery draws (docs/design.md §10): every DRAW_POLL_MS it looks for lottery activities whose
 * window has closed and whose draw is not published, and runs each (origin/lottery/draw.ts). Safe
 * with many origins: the draw record's lease lets one work at a time, and a draw left half done by
 * a dead process is resumed once its lease (DRAW_LEASE_MS) has run out.
 */
import { hostname } from 'node:os';
import { randomHex } from '../../contract/ids.js';
import type { OriginConfig } from '../platform/config.js';
import { runDraw, type DrawDeps, type DrawSettings } from './draw.js';
import { dueDraws } from './draw-store.js';
import { PeriodicJob } from '../platform/periodic.js';

/** What the draw job uses: the draw's own deps and the DRAW_* settings. */
export interface DrawJobDeps extends DrawDeps {
  config: Pick<
    OriginConfig,
    | 'DRAW_POLL_MS'
    | 'DRAW_LEASE_MS'
    | 'DRAW_RESERVE_BATCH'
    | 'DRAW_PUBLISH_BATCH'
    | 'DRAW_READ_PAGE'
    | 'DRAW_READ_IN_FLIGHT'
    | 'DRAW_HASH_WORKERS'
    | 'DRAW_HASH_ANSWER_MS'
    | 'DRAW_SECRET'
  >;
}

/** A draw that could not finish (not warmed, paused, stopped, MySQL or Redis trouble) is retried after this long. */
const DRAW_RETRY_AFTER_MS = 5_000;

export class DrawJob extends PeriodicJob {
  private readonly settings: DrawSettings;
  /** activityId → when a failed draw may be tried again (one warning per try, not per poll). */
  private readonly retryAt = new Map<string, number>();

  constructor(private readonly deps: DrawJobDeps) {
    super('draw', deps.config.DRAW_POLL_MS, deps.log);
    this.settings = {
      owner: `${hostname().slice(0, 30)}:${process.pid}:${randomHex(4)}`,
      leaseMs: deps.config.DRAW_LEASE_MS,
      reserveBatch: deps.config.DRAW_RESERVE_BATCH,
      publishBatch: deps.config.DRAW_PUBLISH_BATCH,
      pageSize: deps.config.DRAW_READ_PAGE,
      inFlight: deps.config.DRAW_READ_IN_FLIGHT,
      hashWorkers: deps.config.DRAW_HASH_WORKERS,
      hashAnswerMs: deps.config.DRAW_HASH_ANSWER_MS,
      drawSecret: deps.config.DRAW_SECRET,
    };
  }

  async round(): Promise<boolean> {
    for (const activityId of await dueDraws(this.deps.db, new Date())) {
      if ((this.retryAt.get(activityId) ?? 0) > Date.now()) continue;
      try {
        await runDraw(this.deps, activityId, this.settings);
        this.retryAt.delete(activityId);
      } catch (err) {
        this.retryAt.set(activityId, Date.now() + DRAW_RETRY_AFTER_MS);
        this.deps.log.warn({ activityId, err: (err as Error).message }, 'lottery draw did not finish; will resume');
      }
    }
    return false;
  }
}
