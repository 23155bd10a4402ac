/**
 * The operator console (docs/console.md) on the origin's admin side, never through the public edge:
 * - `GET /admin/console/` and its files (origin/console/): the static shell, loaded without the token,
 *   under a strict CSP (no inline script, nothing from elsewhere);
 * - `/admin/console/api/*` (`Authorization: Bearer` an admin operator's token, as the admin API): who
 *   the token's operator is, the reads the admin API has no route for — the sales list, one sale's
 *   live view, the cleanup checklist, the end-of-sale report — and the create form's check. Every
 *   action the console offers calls the admin API itself.
 * Registered before the other /admin routes (origin/app.ts), so the shell is answered before their
 * token check.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { ContractError, errorBody } from '../../contract/errors.js';
import { createActivitySchema } from '../sale/sale-schemas.js';
import { cleanupChecklist } from '../operator/cleanup-checklist.js';
import { saleReport } from '../operator/report.js';
import { listSales, liveView, type SaleConsoleDeps } from './sale-console.js';
import { LoopDelay } from './sale-signals.js';
import { SaleCharts, type SaleChartDeps } from './sale-charts.js';
import type { OriginConfig } from '../platform/config.js';
import { projectPath } from '../platform/paths.js';
import { adminToken } from '../platform/http/middleware.js';
import type { OriginEnv } from '../platform/http/types.js';
import { idParam, parseJson } from '../platform/http/validate.js';

/** The console's own headers: the sale page's rules (edge/public/_headers), with no outside images. */
export const CONSOLE_SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // The files change with the origin's version; an operator always gets the current ones.
  'Cache-Control': 'no-cache',
};

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/** The chart library's files as the console names them → their name in node_modules/uplot/dist. */
const CHART_LIBRARY: [string, string][] = [
  ['uplot.js', 'uPlot.iife.min.js'],
  ['uplot.css', 'uPlot.min.css'],
];

/** The console's files, read once at start: name → [content type, bytes]. Only these are served. */
function consoleFiles(): Map<string, [string, Buffer]> {
  const dir = projectPath('origin', 'console');
  const files = new Map<string, [string, Buffer]>();
  for (const name of readdirSync(dir)) {
    const type = CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)];
    if (type) files.set(name, [type, readFileSync(`${dir}/${name}`)]);
  }
  if (!files.has('index.html')) throw new Error(`no console at ${dir}`);
  // uPlot (the charts), served from this origin under the console's CSP: no CDN.
  for (const [name, file] of CHART_LIBRARY) {
    const type = CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)]!;
    files.set(name, [type, readFileSync(projectPath('node_modules', 'uplot', 'dist', file))]);
  }
  return files;
}

/**
 * What the console's API uses: the admin operators' tokens, its own reads (sale-console.ts), and what
 * the end-of-sale report (operator/report.ts) and the cleanup checklist (operator/cleanup-checklist.ts) use.
 */
export interface ConsoleRouteDeps {
  saleConsole: SaleConsoleDeps;
  report: ReportInput;
  checklist: ChecklistInput;
  /** The charts' series and the alert banners (sale-charts.ts). */
  charts: SaleChartDeps;
  config: Pick<OriginConfig, 'ADMIN_OPERATORS'>;
}

/** What saleReport (operator/report.ts) is handed. */
export type ReportInput = Parameters<typeof saleReport>[0];
/** What cleanupChecklist (operator/cleanup-checklist.ts) is handed. */
export type ChecklistInput = Parameters<typeof cleanupChecklist>[0];

export function consoleRoutes(deps: ConsoleRouteDeps) {
  const app = new Hono<OriginEnv>();
  const files = consoleFiles();
  const loop = new LoopDelay();
  const charts = new SaleCharts(deps.charts);
  const serve = (name: string) => {
    const file = files.get(name);
    if (!file) throw new ContractError('not_found', 'no such console file');
    return new Response(new Uint8Array(file[1]), { headers: { 'content-type': file[0], ...CONSOLE_SECURITY_HEADERS } });
  };

  app.use('/api/*', adminToken({ operators: deps.config.ADMIN_OPERATORS }));
  app.use('/api/*', async function noStore(c, next) {
    await next();
    c.header('Cache-Control', 'no-store');
  });

  // Who the console is signed in as: the name the admin API records as the actor of every change
  // made with this token (adminToken), so the console shows it instead of asking for one.
  app.get('/api/whoami', (c) => c.json({ operator: c.get('operator') }));

  app.get('/api/sales', async (c) => {
    const list = await listSales(deps.saleConsole);
    const extras = await Promise.all(list.sales.map((s) => charts.overview(s)));
    return c.json({ ...list, sales: list.sales.map((s, i) => ({ ...s, ...extras[i] })) });
  });

  app.get('/api/sales/:id/live', idParam(), async (c) => {
    const live = await liveView(deps.saleConsole, loop, c.req.valid('param').id);
    return c.json({ ...live, ...(await charts.live(live, live.warmupStatus)) });
  });

  app.get('/api/sales/:id/report', idParam(), async (c) =>
    c.json(await saleReport(deps.report, c.req.valid('param').id)),
  );

  app.get('/api/sales/:id/cleanup-checklist', idParam(), async (c) =>
    c.json(await cleanupChecklist(deps.checklist, c.req.valid('param').id)),
  );

  // The create form's check, by the very schema `POST /admin/activities` parses with: every issue
  // with its field (the API's 400 names only the first), so the form marks each field at once.
  app.post('/api/activities/check', async (c) => {
    const parsed = createActivitySchema.safeParse(parseJson(c.get('rawBody')));
    if (parsed.success) return c.json({ ok: true });
    const issues = parsed.error.issues.map((i) => ({ field: i.path.join('.'), message: i.message }));
    const first = issues[0]!;
    return c.json(
      {
        ...errorBody('bad_request', `${first.field ? `${first.field}: ` : ''}${first.message}`, c.get('traceId')),
        issues,
      },
      400,
    );
  });

  app.get('/', () => serve('index.html'));
  app.get('/:file{[a-z][a-z0-9.-]*\\.(?:js|css)}', (c) => serve(c.req.param('file')));
  app.all('/*', (c) => c.json(errorBody('not_found', 'no such route', c.get('traceId')), 404));
  return app;
}
