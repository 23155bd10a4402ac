/**
 * ActivityDO (docs/design.md §4): one per activity, SQLite storage. Holds the ActivitySnapshot the origin
 * pushes (`PUT /internal/activities/:id`) and the edge's own sold-out flag. With no snapshot it
 * fetches one from the origin's `GET /internal/activities/:id` — once, shared by concurrent callers.
 *
 * Pushes are best effort, so the object heals a missed one by itself (docs/design.md §10): while the sale
 * is not over, an alarm refetches the snapshot every ACTIVITY_REFRESH_MS. With the isolate and colo
 * cache TTLs on top, a lost pause / unpause / sold-out / refill is in force everywhere within ~3 s.
 */
import { DurableObject } from 'cloudflare:workers';
import { ContractError, activitySnapshotSchema, randomHex, type ActivitySnapshot } from '../../contract/index.js';
import { callOrigin } from '../origin.js';
import { settingsOf } from '../settings.js';

/** How long an origin 404 is remembered, so a stream of requests for an unknown id costs one origin call. */
const NOT_FOUND_TTL_MS = 1_000;
const SNAPSHOT_KEY = 'snapshot';

/** Stopped for good, or past its end: no state change can matter any more. */
function saleIsOver(s: ActivitySnapshot, now: number): boolean {
  return s.state === 'stopped' || now >= Date.parse(s.config.endsAt);
}

/** RPC answers are plain data: a thrown ContractError would lose its class crossing the stub. */
export type ActivityRead =
  { kind: 'found'; snapshot: ActivitySnapshot } | { kind: 'not_found' } | { kind: 'unavailable'; message: string };

export class ActivityDO extends DurableObject<Env> {
  private snapshot: ActivitySnapshot | null = null;
  private notFoundUntil = 0;
  private loading: Promise<ActivityRead> | null = null;
  /** Bumped by every save, so a refresh that raced a push does not overwrite the newer push. */
  private saves = 0;

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
        ? { ...pushed, config: stored.config, draw: stored.draw ?? pushed.draw }
        : pushed;
    await this.save(next);
    return next;
  }

  /** The origin answered `sold_out`: stop forwarding until it pushes soldOut=false. */
  async markSoldOut(): Promise<void> {
    if (this.snapshot && !this.snapshot.soldOut) await this.save({ ...this.snapshot, soldOut: true });
  }

  /** The refresh: the origin's current snapshot replaces ours; then the next one, until the sale is over. */
  override async alarm(): Promise<void> {
    const current = this.snapshot;
    if (!current || saleIsOver(current, Date.now())) return;
    const savesBefore = this.saves;
    try {
      const answer = await callOrigin<unknown>(settingsOf(this.env), {
        method: 'GET',
        path: `/internal/activities/${current.config.activityId}`,
        traceId: randomHex(16),
      });
      const parsed = activitySnapshotSchema.safeParse(answer.body);
      if (parsed.success && parsed.data.config.activityId === current.config.activityId && this.saves === savesBefore) {
        await this.save(parsed.data);
        return; // save() scheduled the next refresh
      }
    } catch (err) {
      // The origin forgot the activity: nothing left to heal. Anything else: try again next time.
      if (err instanceof ContractError && err.code === 'not_found') return;
    }
    await this.scheduleRefresh();
  }

  private async save(snapshot: ActivitySnapshot): Promise<void> {
    await this.ctx.storage.put(SNAPSHOT_KEY, snapshot);
    this.snapshot = snapshot;
    this.notFoundUntil = 0;
    this.saves++;
    await this.scheduleRefresh();
  }

  private async scheduleRefresh(): Promise<void> {
    if (!this.snapshot || saleIsOver(this.snapshot, Date.now())) return;
    if ((await this.ctx.storage.getAlarm()) !== null) return;
    await this.ctx.storage.setAlarm(Date.now() + settingsOf(this.env).activityRefreshMs);
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
