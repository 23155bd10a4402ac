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
/** The counts of one kind of traffic: real (the top level of FiguresGrowth) or shadow. */
type TrafficGrowth = Omit<FiguresGrowth, 'shadow'>;

function emptyTraffic(): TrafficGrowth {
  return { clicks: 0, tickets: 0, admitted: 0, refusals: {}, originCalls: {} };
}

export function emptyGrowth(): FiguresGrowth {
  return { ...emptyTraffic(), shadow: emptyTraffic() };
}

function addCounts(into: Record<string, number>, more: Record<string, number>): void {
  for (const [key, n] of Object.entries(more)) into[key] = (into[key] ?? 0) + n;
}

function addTraffic(into: TrafficGrowth, more: TrafficGrowth): void {
  into.clicks += more.clicks;
  into.tickets += more.tickets;
  into.admitted += more.admitted;
  addCounts(into.refusals, more.refusals);
  addCounts(into.originCalls, more.originCalls);
}

/** Adds one growth to another, real and shadow apart. */
export function addGrowth(into: FiguresGrowth, more: FiguresGrowth): void {
  addTraffic(into, more);
  addTraffic(into.shadow, more.shadow);
}

export class EdgeFiguresDO extends DurableObject<Env> {
  private totals: FiguresGrowth = emptyGrowth();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      const kept = await ctx.storage.get<FiguresGrowth>(TOTALS_KEY);
      // Totals kept before shadow traffic was counted apart have no `shadow`: it starts at 0.
      this.totals = kept ? { ...kept, shadow: kept.shadow ?? emptyTraffic() } : emptyGrowth();
    });
  }

  async add(growth: FiguresGrowth): Promise<void> {
    addGrowth(this.totals, growth);
    // Kept, so the totals survive the object's eviction (Prometheus would read a reset otherwise).
    await this.ctx.storage.put(TOTALS_KEY, this.totals);
  }

  async read(): Promise<FiguresGrowth> {
    return this.totals;
  }
}
