/**
 * What the console's charts, banners and sales overview add to its reads (docs/console.md,
 * "Charts", "Alerts", "Sales overview"): a sale's kept series (watch/sale-series.ts) and its alert
 * banners (sale-alerts.ts) beside the live view; for every live or upcoming sale of the list, its
 * recent success rate, a sparkline of reservations per second and its banners.
 */
import type { OriginConfig } from '../platform/config.js';
import type { Db } from '../platform/db/pool.js';
import type { Metrics } from '../platform/metrics.js';
import type { FailoverGate } from '../recovery/failover-gate.js';
import type { ShortBuckets } from '../sale/replica-layout.js';
import type { SaleSeriesStore } from '../watch/sale-series.js';
import { FirstSeen, readAlertFacts, readBaseline, saleAlerts, seriesFacts, type SaleAlert } from './sale-alerts.js';

export interface SaleChartDeps {
  db: Db;
  metrics: Pick<Metrics, 'registry'>;
  series: Pick<SaleSeriesStore, 'view'>;
  failover: Pick<FailoverGate, 'closedSince' | 'lastReopened'>;
  shortBuckets: Pick<ShortBuckets, 'unitsOf'>;
  config: Pick<OriginConfig, 'CONSOLE_DOCS_URL' | 'CONSOLE_ALERT_WINDOW_SECONDS'>;
}

/** Points of the overview's sparkline: the last two minutes at one point a second. */
export const SPARK_POINTS = 120;

/** A banner as the console shows it: its docs section as a link when CONSOLE_DOCS_URL is set. */
export type ShownAlert = SaleAlert & { docsUrl: string | null };

export class SaleCharts {
  private readonly seen = new FirstSeen();
  private readonly baseline = readBaseline();

  constructor(private readonly deps: SaleChartDeps) {}

  private shown(alerts: SaleAlert[]): ShownAlert[] {
    const base = this.deps.config.CONSOLE_DOCS_URL?.replace(/\/$/, '');
    return alerts.map((a) => ({ ...a, docsUrl: base ? `${base}/${a.docs.file}#${a.docs.anchor}` : null }));
  }

  /** The sale's banners now (a shadow sale's read from its own ledger). */
  async alerts(sale: { activityId: string; shadow?: boolean }, warmupStatus: string): Promise<ShownAlert[]> {
    const { activityId } = sale;
    const facts = await readAlertFacts(
      {
        ...this.deps,
        registry: this.deps.metrics.registry,
        windowSeconds: this.deps.config.CONSOLE_ALERT_WINDOW_SECONDS,
      },
      sale,
      warmupStatus,
      this.deps.series.view(activityId),
      this.baseline,
    );
    return this.shown(saleAlerts(facts, this.seen, activityId, this.deps.config.CONSOLE_ALERT_WINDOW_SECONDS));
  }

  /** What the live view adds: the series (null before the sale's window) and the banners. */
  async live(sale: { activityId: string; shadow?: boolean }, warmupStatus: string) {
    return {
      series: this.deps.series.view(sale.activityId),
      baseline: this.baseline,
      alerts: await this.alerts(sale, warmupStatus),
    };
  }

  /** What a row of the sales list adds, for a live or upcoming sale (others: nulls and none). */
  async overview(s: { activityId: string; shadow?: boolean; publicState: string | null; warmupStatus: string }) {
    const live = s.publicState !== null && s.publicState !== 'ended';
    const view = live ? this.deps.series.view(s.activityId) : null;
    const windowSeconds = this.deps.config.CONSOLE_ALERT_WINDOW_SECONDS;
    const recent = seriesFacts(view, Date.now(), windowSeconds).recent;
    return {
      successRate: recent.rate,
      successRateWindowSeconds: windowSeconds,
      spark: view ? view.series.reserved.slice(-SPARK_POINTS) : [],
      alerts: live ? await this.alerts(s, s.warmupStatus) : [],
    };
  }
}
