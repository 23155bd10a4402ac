/**
 * The shape of every lifecycle loop: `start()` / `stop()`, one round at a time, the next round
 * after `everyMs` — at once when the round says there is more to do, or when `wake()` is called.
 * `stop()` lets the round in hand finish (drain) and returns.
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

  /** One round; true when there is more work waiting (a full batch). */
  abstract round(): Promise<boolean>;

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
      let more = false;
      this.woken = false;
      try {
        more = await this.round();
      } catch (err) {
        this.log.warn({ job: this.name, err: (err as Error).message }, 'lifecycle round failed; will retry');
      }
      if (more || this.woken || this.stopping) continue;
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        this.timer = setTimeout(resolve, this.everyMs);
      });
      if (this.timer) clearTimeout(this.timer);
      this.wakeUp = null;
    }
  }
}
