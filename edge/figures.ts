/**
 * This isolate's figures for the watching screen (docs/watching-a-sale.md): purchase clicks,
 * tickets issued, purchases admitted to the origin, refusals by reason and origin calls by result,
 * real traffic and shadow traffic (a rehearsal's, contract/shadow.ts) apart.
 * Counting is a field increment in memory (the doomed-click path is benchmarked); the growth goes to
 * EdgeFiguresDO in the background at most every EDGE_FIGURES_FLUSH_MS, from whichever request comes
 * next — one Durable Object call per isolate per interval, none per click.
 */
import type { ExecutionContext } from 'hono';
import { addGrowth, emptyGrowth, type FiguresGrowth } from './durable/edge-figures.js';
import { edgeFigures } from './durable/names.js';

let growth: FiguresGrowth = emptyGrowth();
let dirty = false;
let lastFlushAt = 0;

const PURCHASE = /^\/api\/activities\/[^/]+\/purchase$/;
const TICKETS = /^\/api\/activities\/[^/]+\/tickets$/;

/** Where a request's counts go: shadow traffic's apart from real traffic's. */
const countsOf = (shadow: boolean) => (shadow ? growth.shadow : growth);

/**
 * One answered request (from the request log, which sees every answer and its outcome); `shadow`
 * when it carried a verified shadow token.
 */
export function countAnswer(method: string, path: string, status: number, outcome: string, shadow: boolean): void {
  if (!path.startsWith('/api/')) return;
  const counts = countsOf(shadow);
  if (method === 'POST' && PURCHASE.test(path)) counts.clicks++;
  else if (method === 'POST' && status < 400 && TICKETS.test(path)) counts.tickets++;
  if (status >= 400) counts.refusals[outcome] = (counts.refusals[outcome] ?? 0) + 1;
  dirty = true;
}

/** A purchase that passed every edge gate and goes to the origin (purchase route or waiting room). */
export function countAdmitted(shadow: boolean): void {
  countsOf(shadow).admitted++;
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
 * `shadow` when the call is made for a shadow token's request.
 */
export function countOriginCall(path: string, result: 'answered' | 'timeout' | 'unreachable', shadow: boolean): void {
  const key = `${callOf(path)}/${result}`;
  const { originCalls } = countsOf(shadow);
  originCalls[key] = (originCalls[key] ?? 0) + 1;
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
  addGrowth(growth, batch);
  dirty = true;
}

/** The totals over every isolate that has flushed. */
export function readTotals(env: Env): Promise<FiguresGrowth> {
  return edgeFigures(env).read();
}
