/**
 * This isolate's figures for the watching screen (docs/watching-a-sale.md): purchase clicks,
 * tickets issued, purchases admitted to the origin, refusals by reason and origin calls by result.
 * Counting is a field increment in memory (the doomed-click path is benchmarked); the growth goes to
 * EdgeFiguresDO in the background at most every EDGE_FIGURES_FLUSH_MS, from whichever request comes
 * next — one Durable Object call per isolate per interval, none per click.
 */
import type { ExecutionContext } from 'hono';
import { emptyGrowth, type FiguresGrowth } from './durable/edge-figures.js';
import { edgeFigures } from './durable/names.js';

let growth: FiguresGrowth = emptyGrowth();
let dirty = false;
let lastFlushAt = 0;

const PURCHASE = /^\/api\/activities\/[^/]+\/purchase$/;
const TICKETS = /^\/api\/activities\/[^/]+\/tickets$/;

/** One answered request (from the request log, which sees every answer and its outcome). */
export function countAnswer(method: string, path: string, status: number, outcome: string): void {
  if (!path.startsWith('/api/')) return;
  if (method === 'POST' && PURCHASE.test(path)) growth.clicks++;
  else if (method === 'POST' && status < 400 && TICKETS.test(path)) growth.tickets++;
  if (status >= 400) growth.refusals[outcome] = (growth.refusals[outcome] ?? 0) + 1;
  dirty = true;
}

/** A purchase that passed every edge gate and goes to the origin (purchase route or waiting room). */
export function countAdmitted(): void {
  growth.admitted++;
  dirty = true;
}

/** Which origin call a path is: a purchase, a status read, or an activity refetch. */
function callOf(path: string): 'reserve' | 'status' | 'activity' | 'other' {
  if (path === '/internal/reserve') return 'reserve';
  if (path.startsWith('/internal/reservations/') || path.endsWith('/reservation')) return 'status';
  if (path.startsWith('/internal/activities/')) return 'activity';
  return 'other';
}

/**
 * An origin call, as `<call>/<result>`: result `answered` (any HTTP answer), `timeout` (past
 * ORIGIN_TIMEOUT_MS) or `unreachable`. Calls a Durable Object makes (the activity refetch) are
 * counted in the isolate that runs it, handed over when that isolate also serves a request.
 */
export function countOriginCall(path: string, result: 'answered' | 'timeout' | 'unreachable'): void {
  const key = `${callOf(path)}/${result}`;
  growth.originCalls[key] = (growth.originCalls[key] ?? 0) + 1;
  dirty = true;
}

/** Hands the growth to EdgeFiguresDO when due; the request does not wait for it. */
export function flushFiguresIfDue(env: Env, ctx: Pick<ExecutionContext, 'waitUntil'>, everyMs: number): void {
  if (!dirty) return;
  const now = Date.now();
  if (now - lastFlushAt < everyMs) return;
  lastFlushAt = now;
  const batch = growth;
  growth = emptyGrowth();
  dirty = false;
  const stub = edgeFigures(env);
  ctx.waitUntil(
    stub.add(batch).catch(() => {
      // Not lost: counted again with the next flush.
      mergeBack(batch);
    }),
  );
}

function mergeBack(batch: FiguresGrowth): void {
  growth.clicks += batch.clicks;
  growth.tickets += batch.tickets;
  growth.admitted += batch.admitted;
  for (const [k, n] of Object.entries(batch.refusals)) growth.refusals[k] = (growth.refusals[k] ?? 0) + n;
  for (const [k, n] of Object.entries(batch.originCalls)) growth.originCalls[k] = (growth.originCalls[k] ?? 0) + n;
  dirty = true;
}

/** The totals over every isolate that has flushed. */
export function readTotals(env: Env): Promise<FiguresGrowth> {
  return edgeFigures(env).read();
}
