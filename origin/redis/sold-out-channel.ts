/** Sold-out transitions between origin processes: published and heard on the pub/sub channel. */
import type { RedisConnection } from './connection.js';
import type { RedisClient } from './client.js';

export class SoldOutChannel {
  private subscriber: RedisClient | null = null;

  constructor(private readonly redis: RedisConnection) {}

  async publishSoldOut(activityId: string, soldOut: boolean): Promise<void> {
    await this.redis.ops.redis.publish(this.redis.space.soldOutChannel, `${activityId}:${soldOut ? 1 : 0}`);
  }

  async onSoldOut(listener: (activityId: string, soldOut: boolean) => void): Promise<void> {
    const channel = this.redis.space.soldOutChannel;
    this.subscriber ??= this.redis.open('origin-soldout-sub', {
      commandTimeoutMs: 5_000,
      queueWhileOffline: true,
      logAs: 'redis subscriber error',
    });
    this.subscriber.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      const [activityId, on] = message.split(':');
      if (activityId) listener(activityId, on === '1');
    });
    await this.subscriber.subscribe(channel);
  }
}
