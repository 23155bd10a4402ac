/**
 * ActivityDO (DESIGN §4): one per activity, SQLite storage. Holds the ActivitySnapshot the origin
 * pushes (`PUT /internal/activities/:id`) and the edge's own sold-out flag. With no snapshot it
 * fetches one from the origin's `GET /internal/activities/:id` — once, shared by concurrent callers.
 */
import { DurableObject } from 'cloudflare:workers';
import { ContractError, activitySnapshotSchema, randomHex, type ActivitySnapshot } from '../../contract/index.js';
import { callOrigin } from '../origin.js';
import { settingsOf } from '../settings.js';

/** How long an origin 404 is remembered, so a stream of requests for an unknown id costs one origin call. */
const NOT_FOUND_TTL_MS = 1_000;
const SNAPSHOT_KEY = 'snapshot';

/** RPC answers are plain data: a thrown ContractError would lose its class crossing the stub. */
export type ActivityRead =
  { kind: 'found'; snapshot: ActivitySnapshot } | { kind: 'not_found' } | { kind: 'unavailable'; message: string };

export class ActivityDO extends DurableObject<Env> {
  private snapshot: ActivitySnapshot | null = null;
  private notFoundUntil = 0;
  private loading: Promise<ActivityRead> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.snapshot = (await ctx.storage.get<ActivitySnapshot>(SNAPSHOT_KEY)) ?? null;
    });
  }

  async read(activityId: string, traceId: string): Promise<ActivityRead> {
    if (this.snapshot) return { kind: 'found', snapshot: this.snapshot };
    if (Date.now() < this.notFoundUntil) return { kind: 'not_found' };
    this.loading ??= this.fetchFromOrigin(activityId, traceId).finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /**
   * Stores what the origin pushed. Config never rolls back to a lower version; state and the
   * sold-out flag always take the pushed value (the origin pushes full snapshots, last one wins).
   */
  async upsert(pushed: ActivitySnapshot): Promise<ActivitySnapshot> {
    const stored = this.snapshot;
    const next =
      stored && pushed.config.version < stored.config.version
        ? { config: stored.config, state: pushed.state, soldOut: pushed.soldOut }
        : pushed;
    await this.save(next);
    return next;
  }

  /** The origin answered `sold_out`: stop forwarding until it pushes soldOut=false. */
  async markSoldOut(): Promise<void> {
    if (this.snapshot && !this.snapshot.soldOut) await this.save({ ...this.snapshot, soldOut: true });
  }

  private async save(snapshot: ActivitySnapshot): Promise<void> {
    await this.ctx.storage.put(SNAPSHOT_KEY, snapshot);
    this.snapshot = snapshot;
    this.notFoundUntil = 0;
  }

  private async fetchFromOrigin(activityId: string, traceId: string): Promise<ActivityRead> {
    try {
      const answer = await callOrigin<unknown>(settingsOf(this.env), {
        method: 'GET',
        path: `/internal/activities/${activityId}`,
        traceId: traceId || randomHex(16),
      });
      const parsed = activitySnapshotSchema.safeParse(answer.body);
      if (!parsed.success || parsed.data.config.activityId !== activityId) {
        return { kind: 'unavailable', message: 'origin sent an invalid activity snapshot' };
      }
      // A push may have landed while we were fetching; it is newer than what we fetched.
      if (this.snapshot) return { kind: 'found', snapshot: this.snapshot };
      await this.save(parsed.data);
      return { kind: 'found', snapshot: parsed.data };
    } catch (err) {
      if (err instanceof ContractError && err.code === 'not_found') {
        this.notFoundUntil = Date.now() + NOT_FOUND_TTL_MS;
        return { kind: 'not_found' };
      }
      return { kind: 'unavailable', message: err instanceof Error ? err.message : 'origin unavailable' };
    }
  }
}
