/**
 * In-process sold-out flags (DESIGN §5): set when the script says SOLD_OUT, shared between origin
 * instances over Redis pub/sub, cleared when a refill puts stock back. A flag may only ever cause
 * the script to be skipped — never the holder lookup.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import { SOLD_OUT_CHANNEL } from '../redis/keys.js';

export class SoldOutFlags {
  private readonly flags = new Set<string>();

  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly log: Logger,
    private readonly onChange: (activityId: string, soldOut: boolean) => void = () => {},
  ) {}

  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== SOLD_OUT_CHANNEL) return;
      const [activityId, on] = message.split(':');
      if (activityId) this.apply(activityId, on === '1');
    });
    await this.subscriber.subscribe(SOLD_OUT_CHANNEL);
  }

  has(activityId: string): boolean {
    return this.flags.has(activityId);
  }

  /** Sets or clears the flag here and tells the other instances; true when this was a transition. */
  set(activityId: string, soldOut: boolean): boolean {
    const changed = this.apply(activityId, soldOut);
    if (changed) {
      this.publisher.publish(SOLD_OUT_CHANNEL, `${activityId}:${soldOut ? 1 : 0}`).catch((err) => {
        this.log.warn({ activityId, err: err.message }, 'sold-out broadcast failed');
      });
      this.onChange(activityId, soldOut);
    }
    return changed;
  }

  private apply(activityId: string, soldOut: boolean): boolean {
    if (this.flags.has(activityId) === soldOut) return false;
    if (soldOut) this.flags.add(activityId);
    else this.flags.delete(activityId);
    return true;
  }
}
