/**
 * In-process sold-out flags (docs/design.md §5): set when the script says SOLD_OUT, shared between origin
 * instances over Redis pub/sub, cleared when a refill puts stock back. A flag may only ever cause
 * the script to be skipped — never the holder lookup. The flags themselves push nothing to the edge:
 * callers set them through `SnapshotPublisher.setSoldOut` (sale/snapshot-publisher.ts), which does.
 */
import type { Logger } from '../platform/logger.js';
import type { SoldOutChannel } from '../redis/sold-out-channel.js';

export class SoldOutFlags {
  private readonly flags = new Set<string>();

  constructor(
    private readonly store: Pick<SoldOutChannel, 'publishSoldOut' | 'onSoldOut'>,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    await this.store.onSoldOut((activityId, soldOut) => this.apply(activityId, soldOut));
  }

  has(activityId: string): boolean {
    return this.flags.has(activityId);
  }

  /** Sets or clears the flag here and tells the other instances; true when this was a transition. */
  set(activityId: string, soldOut: boolean): boolean {
    const changed = this.apply(activityId, soldOut);
    if (changed) {
      this.store.publishSoldOut(activityId, soldOut).catch((err: Error) => {
        this.log.warn({ activityId, err: err.message }, 'sold-out broadcast failed');
      });
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
