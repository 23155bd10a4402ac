/**
 * Which admission a purchase meets (docs/design.md §10). FCFS activities: the reserve decision, as always.
 * Lottery activities: inside `[startsAt, startsAt + lotteryWindowMs)` an entry; after the window,
 * `drawing` until the winners are final (so nobody buys ahead of a winner), then FCFS on what is left.
 * The window is immutable config, cached for the process's life; `drawn` is final, cached once seen.
 */
import { lotteryWindow, type AdmissionMode } from '../../contract/activity.js';
import type { Db } from '../platform/db/pool.js';
import { admissionOf } from '../sale/sale-store.js';
import type { LotteryEntries } from '../redis/lottery-entries.js';
import type { Sale } from '../redis/redis-store.js';

export type AdmissionPhase = 'fcfs' | 'entry' | 'drawing';

interface Window {
  opensAt: number;
  closesAt: number;
}

export class LotteryAdmission {
  /** One lookup per activity, shared by the burst of purchases at a sale's start. */
  private readonly windows = new Map<string, Promise<Window | null | undefined>>();
  private readonly drawn = new Set<string>();
  /** Activities found to be FCFS (no lottery window): known without a promise on the reserve path. */
  private readonly fcfs = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly stock: Pick<LotteryEntries, 'drawPhase'>,
  ) {}

  /**
   * True when this activity is known to meet no lottery: FCFS by config, or a lottery drawn. The
   * reserve path asks this first and skips the lottery step (a lookup and promises per request).
   */
  isFcfs(activityId: string): boolean {
    return this.fcfs.has(activityId) || this.drawn.has(activityId);
  }

  async phase(sale: Sale, now = Date.now()): Promise<AdmissionPhase> {
    const window = await this.windowOf(sale.activityId);
    if (!window) return 'fcfs';
    // Before opensAt the edge answers too_early; an origin whose clock is a little behind still enters.
    if (now < window.closesAt) return 'entry';
    if (this.drawn.has(sale.activityId)) return 'fcfs';
    if ((await this.stock.drawPhase(sale)) !== 'drawn') return 'drawing';
    this.drawn.add(sale.activityId);
    return 'fcfs';
  }

  windowOf(activityId: string): Promise<Window | null> {
    let window = this.windows.get(activityId);
    if (!window) {
      if (this.windows.size >= 10_000) {
        this.windows.clear();
        this.fcfs.clear();
      }
      window = this.lookUp(activityId);
      this.windows.set(activityId, window);
      // A failed lookup, or an id MySQL does not know (yet), is asked again next time.
      window.then(
        (w) => {
          if (w === undefined) this.windows.delete(activityId);
          else if (w === null) this.fcfs.add(activityId);
        },
        () => this.windows.delete(activityId),
      );
    }
    return window.then((w) => w ?? null);
  }

  private async lookUp(activityId: string): Promise<Window | null | undefined> {
    const r = await admissionOf(this.db, activityId);
    if (!r) return undefined;
    return lotteryWindow({
      admission: r.admission as AdmissionMode,
      startsAt: new Date(r.starts_at).toISOString(),
      lotteryWindowMs: Number(r.lottery_window_ms),
    });
  }
}
