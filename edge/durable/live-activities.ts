/**
 * LiveActivitiesDO (docs/design.md §10): the one list of activity ids the origin has told the edge about.
 * An id not on it is answered 404 without an origin call and without creating an ActivityDO, so
 * made-up ids cost a map lookup. The origin replaces the list (`PUT /internal/activities`, on start
 * and every EDGE_LIVE_LIST_PUSH_MS) and every per-activity push adds its id at once. Isolates copy
 * the list and re-read it at most every LIVE_LIST_TTL_MS (edge/live-activities.ts), so this object
 * sees about one read per isolate per TTL.
 */
import { DurableObject } from 'cloudflare:workers';

const LIST_KEY = 'ids';

export class LiveActivitiesDO extends DurableObject<Env> {
  private ids: string[] = [];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.ids = (await ctx.storage.get<string[]>(LIST_KEY)) ?? [];
    });
  }

  async list(): Promise<string[]> {
    return this.ids;
  }

  /** The origin's full list: replaces what was there. */
  async replace(ids: string[]): Promise<number> {
    this.ids = [...new Set(ids)];
    await this.ctx.storage.put(LIST_KEY, this.ids);
    return this.ids.length;
  }

  /** One pushed activity: live from now on. */
  async add(id: string): Promise<void> {
    if (this.ids.includes(id)) return;
    this.ids = [...this.ids, id];
    await this.ctx.storage.put(LIST_KEY, this.ids);
  }
}
