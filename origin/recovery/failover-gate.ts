/**
 * The sales this origin process keeps closed after a Redis failover (failover-watch.ts closes and
 * reopens them; the snapshot publisher shows them paused, the request path answers 503 `not_ready`).
 */
/** The sales this process keeps closed after a failover, and since when (ms). */
export class FailoverGate {
  private readonly closed = new Map<string, number>();
  /** The last reopening of each sale: when it was closed and reopened (ms), for the console's banner. */
  private readonly reopened = new Map<string, { closedAt: number; reopenedAt: number }>();

  isClosed(activityId: string): boolean {
    return this.closed.has(activityId);
  }

  closedSince(activityId: string): number | undefined {
    return this.closed.get(activityId);
  }

  close(activityId: string): boolean {
    if (this.closed.has(activityId)) return false;
    this.closed.set(activityId, Date.now());
    return true;
  }

  open(activityId: string): void {
    const closedAt = this.closed.get(activityId);
    if (closedAt !== undefined) this.reopened.set(activityId, { closedAt, reopenedAt: Date.now() });
    this.closed.delete(activityId);
  }

  lastReopened(activityId: string): { closedAt: number; reopenedAt: number } | undefined {
    return this.reopened.get(activityId);
  }
}
