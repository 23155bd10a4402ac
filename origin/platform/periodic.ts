/**
 * The shape of every lifecycle loop: `start()` / `stop()`, one round at a time, the next round
 * after `everyMs` — at once when the round says there is more to do, or when `wake()` is called,
 * or after the delay the round names. `stop()` lets the round in hand finish (drain) and returns.
 */
import type { Logger } from './logger.js';

export abstract class PeriodicJob {
  private stopping = false;
  private loop: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private wakeUp: (() => void) | null = null;
  private woken = false;

  constructor(
    protected readonly name: string,
    private readonly everyMs: number,
    protected readonly log: Logger,
  ) {}

  /**
   * One round; true when there is more work waiting (a full batch), or the milliseconds until the
   * next round when it should come sooner than `everyMs` (a round that waited for something).
   */
  abstract round(): Promise<boolean | number>;

  start(): void {
    this.loop ??= this.run();
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeUp?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let more: boolean | number = false;
      this.woken = false;
      try {
        more = await this.round();
      } catch (err) {
        this.log.warn({ job: this.name, err: (err as Error).message }, 'lifecycle round failed; will retry');
      }
      if (more === true || this.woken || this.stopping) continue;
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        this.timer = setTimeout(resolve, more === false ? this.everyMs : Math.min(more, this.everyMs));
      });
      if (this.timer) clearTimeout(this.timer);
      this.wakeUp = null;
    }
  }
}

/**
 * A background job that gives way to something busier: while `busy()` is true, `yields()` says so,
 * for at most `maxMs` in a row; then it answers false once (the job runs a round) and the wait
 * starts again. So the job never stops for good, and a short burst never holds it. `maxMs` 0 never
 * yields.
 */
export class YieldWhileBusy {
  /** Since when rounds have yielded without a break; null when not yielding. */
  private since: number | null = null;

  constructor(
    private readonly maxMs: number,
    private readonly busy: () => boolean,
  ) {}

  yields(now = Date.now()): boolean {
    if (this.maxMs === 0 || !this.busy()) {
      this.since = null;
      return false;
    }
    this.since ??= now;
    if (now - this.since < this.maxMs) return true;
    this.since = null; // yielded long enough: this round runs, the next one yields again
    return false;
  }
}
