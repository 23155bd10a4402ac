/**
 * `--admission lottery` (docs/design.md §10): after the crowd, wait for the draw to be published on the
 * public activity, register its winners as the sale's holders (read from the origin's Redis, so
 * settlement and the verdict count them like any reservation), and report entrants, winners and
 * the time to draw. The rest of the rehearsal (settlement, reconciliation, funnel) runs as usual.
 */
import { Redis } from 'ioredis';
import { activityKeys } from '../../origin/redis/keys.js';
import type { Recorder } from './recorder.js';

export interface LotteryFacts {
  entrants: number;
  winners: number;
  unitsWon: number;
  /** From the window's close to final winners (the origin's own figure). */
  drawMs: number;
  drawnAt: string;
}

/** How long the rehearsal waits for the draw to be published before it gives up. */
const DRAW_WAIT_MS = 600_000;

export async function awaitDraw(edgeUrl: string, activityId: string, rec: Recorder): Promise<LotteryFacts> {
  const deadline = Date.now() + DRAW_WAIT_MS;
  let activity: any;
  for (;;) {
    activity = await (await fetch(`${edgeUrl}/api/activities/${activityId}`)).json();
    if (activity.draw?.entrantsPublished) break;
    if (Date.now() > deadline) throw new Error(`the draw of ${activityId} was not published within ${DRAW_WAIT_MS} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  try {
    const winners = await redis.hgetall(activityKeys(activityId, activityId).winners);
    for (const [userId, reservationId] of Object.entries(winners)) rec.reserved(userId, reservationId, 202, 'draw');
  } finally {
    await redis.quit();
  }
  const drawnAt = Date.parse(activity.draw.drawnAt);
  rec.lastReservedAt = Math.max(rec.lastReservedAt ?? 0, drawnAt);
  return {
    entrants: activity.draw.entrants,
    winners: activity.draw.winners,
    unitsWon: activity.draw.unitsWon,
    drawMs: activity.draw.drawMs,
    drawnAt: activity.draw.drawnAt,
  };
}
