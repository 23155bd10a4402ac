/**
 * The edge's own figures, as `GET /internal/figures` answers them to the origin (signed like every
 * internal call), which exposes them on its /metrics as `seckill_edge_*` (docs/watching-a-sale.md).
 * Counters count since the edge's figures object started (a restart starts them again at 0, which
 * Prometheus reads as a counter reset); `waitingLine` is a level, per live activity.
 */
import { z } from 'zod';

const count = z.number().int().min(0);

/** What the edge counts of one kind of traffic. */
const trafficCounts = {
  clicks: count,
  tickets: count,
  admitted: count,
  /** Refused answers by contract code (sold_out, rate_limited, bad_ticket, …). */
  refusals: z.record(z.string(), count),
  /** Origin calls by `<call>/<result>`: call reserve | status | activity | other; result answered | timeout | unreachable. */
  originCalls: z.record(z.string(), count),
};

/**
 * The top-level counts are real traffic: every answer whose request carried no verified shadow
 * token (contract/shadow.ts), so also answers refused before a token was verified, and calls the
 * edge made for no buyer (an activity refetch). `shadow` counts the answers to shadow tokens.
 */
export const edgeFiguresSchema = z.object({
  ...trafficCounts,
  shadow: z.object(trafficCounts).default({ clicks: 0, tickets: 0, admitted: 0, refusals: {}, originCalls: {} }),
  /** Buyers waiting in each live activity's waiting line. */
  waitingLine: z.record(z.string(), count),
  /** Each live activity's longest admission-shard line: the one that meets WAITING_LINE_MAX first. */
  waitingLineLongestShard: z.record(z.string(), count).default({}),
  /** Bytes each live activity's admission shards hold in storage (the line's rows). */
  waitingLineBytes: z.record(z.string(), count).default({}),
});

export type EdgeFigures = z.infer<typeof edgeFiguresSchema>;

/** Where the origin reads them. */
export const EDGE_FIGURES_PATH = '/internal/figures';
