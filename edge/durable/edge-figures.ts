/**
 * EdgeFiguresDO: the edge's figures summed over every isolate (docs/watching-a-sale.md). Isolates
 * count in memory (edge/figures.ts) and hand their growth here at most every EDGE_FIGURES_FLUSH_MS,
 * so this object sees about one call per isolate per second, never one per click. The origin reads
 * the totals through the signed `GET /internal/figures` when Prometheus scrapes it.
 */
import { DurableObject } from 'cloudflare:workers';
import type { EdgeFigures } from '../../contract/index.js';

const TOTALS_KEY = 'totals';

/** What an isolate hands over: its counts since its last flush (the waiting line is read elsewhere). */
export type FiguresGrowth = Omit<EdgeFigures, 'waitingLine' | 'waitingLineLongestShard' | 'waitingLineBytes'>;

export function emptyGrowth(): FiguresGrowth {
  return { clicks: 0, tickets: 0, admitted: 0, refusals: {}, originCalls: {} };
}

function addCounts(into: Record<string, number>, more: Record<string, number>): void {
  for (const [key, n] of Object.entries(more)) into[key] = (into[key] ?? 0) + n;
}

export class EdgeFiguresDO extends DurableObject<Env> {
  private totals: FiguresGrowth = emptyGrowth();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.totals = (await ctx.storage.get<FiguresGrowth>(TOTALS_KEY)) ?? emptyGrowth();
    });
  }

  async add(growth: FiguresGrowth): Promise<void> {
    this.totals.clicks += growth.clicks;
    this.totals.tickets += growth.tickets;
    this.totals.admitted += growth.admitted;
    addCounts(this.totals.refusals, growth.refusals);
    addCounts(this.totals.originCalls, growth.originCalls);
    // Kept, so the totals survive the object's eviction (Prometheus would read a reset otherwise).
    await this.ctx.storage.put(TOTALS_KEY, this.totals);
  }

  async read(): Promise<FiguresGrowth> {
    return this.totals;
  }
}
