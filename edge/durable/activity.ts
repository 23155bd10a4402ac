/**
 * ActivityDO (docs/design.md §4): one per activity, SQLite storage. Holds the ActivitySnapshot the origin
 * pushes (`PUT /internal/activities/:id`) and the edge's own sold-out flag. With no snapshot it
 * fetches one from the origin's `GET /internal/activities/:id` — once, shared by concurrent callers.
 *
 * Pushes are best effort, so the object heals a missed one by itself (docs/design.md §10): while the sale
 * is not over, an alarm refetches the snapshot every ACTIVITY_REFRESH_MS. With the isolate and colo
 * cache TTLs on top, a lost pause / unpause / sold-out / refill is in force everywhere within ~3 s.
 *
 * A push never takes the object back: one with a lower config version than the snapshot held (the
 * origin bumps the version with every admin change, state included), or with the same version but
 * signed no later than the last push taken (the sold-out flag, the units and a failover pause change
 * without a version bump), is ignored whole. So a captured push replayed within its signature window,
 * or two pushes crossing, cannot re-open a paused or sold-out sale even briefly. Only push signing
 * times (the origin's clock) are compared with each other; the edge's own clock never is.
 */
import { DurableObject } from 'cloudflare:workers';
import { ContractError, activitySnapshotSchema, randomHex, type ActivitySnapshot } from '../../contract/index.js';
import { callOrigin } from '../origin.js';
import { settingsOf } from '../settings.js';

/** How long an origin 404 is remembered, so a stream of requests for an unknown id costs one origin call. */
const NOT_FOUND_TTL_MS = 1_000;
const SNAPSHOT_KEY = 'snapshot';
/** The signing time (ms, the origin's clock) of the last push taken. */
const SIGNED_AT_KEY = 'signedAt';

/** Stopped for good, or past its end: no state change can matter any more. */
function saleIsOver(s: ActivitySnapshot, now: number): boolean {
  return s.state === 'stopped' || now >= Date.parse(s.config.endsAt);
}

/**
 * Whether a push of `version` signed at `at` is older than what is held (`heldVersion`, the last push
 * taken signed at `heldAt`): a lower version, or the same version signed no later (a replay of the
 * last push itself included).
 */
export function isOlder(version: number, at: number, heldVersion: number, heldAt: number): boolean {
  return version < heldVersion || (version === heldVersion && at <= heldAt);
}

/** RPC answers are plain data: a thrown ContractError would lose its class crossing the stub. */
export type ActivityRead =
  { kind: 'found'; snapshot: ActivitySnapshot } | { kind: 'not_found' } | { kind: 'unavailable'; message: string };

/** What a push did: `applied` false when it was older than the snapshot held (which `snapshot` is). */
export interface UpsertAnswer {
  snapshot: ActivitySnapshot;
  applied: boolean;
}

export class ActivityDO extends DurableObject<Env> {
  private snapshot: ActivitySnapshot | null = null;
  /** The last push taken was signed at this time (SIGNED_AT_KEY): a push of the same version signed no later is older. */
  private signedAt = 0;
  private notFoundUntil = 0;
  private loading: Promise<ActivityRead> | null = null;
  /** Bumped by every save, so a refresh that raced a push does not overwrite the newer push. */
  private saves = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      const stored = await ctx.storage.get([SNAPSHOT_KEY, SIGNED_AT_KEY]);
      this.snapshot = (stored.get(SNAPSHOT_KEY) as ActivitySnapshot | undefined) ?? null;
      this.signedAt = (stored.get(SIGNED_AT_KEY) as number | undefined) ?? 0;
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
   * Stores what the origin pushed, signed at `signedAt` (the push's verified timestamp, ms), unless it
   * is older than the snapshot held: a lower config version, or the same version signed no later than
   * the last push taken. An older push changes nothing, no field of it (state, sold-out flag, units,
   * draw): the origin pushes full snapshots, so the newer one held is the whole truth.
   */
  async upsert(pushed: ActivitySnapshot, signedAt: number = Date.now()): Promise<UpsertAnswer> {
    const held = this.snapshot;
    if (held && isOlder(pushed.config.version, signedAt, held.config.version, this.signedAt)) {
      return { snapshot: held, applied: false };
    }
    await this.save(pushed, signedAt);
    return { snapshot: pushed, applied: true };
  }

  /**
   * The origin answered `sold_out`: stop forwarding until it pushes soldOut=false. A replay of a push
   * taken before stays older than the last push taken, so it cannot clear the flag.
   */
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
      if (
        parsed.success &&
        parsed.data.config.activityId === current.config.activityId &&
        this.saves === savesBefore &&
        parsed.data.config.version >= current.config.version
      ) {
        // The origin's current snapshot, never a lower version than held; the last push's signing time
        // stays the mark a later push must pass.
        await this.save(parsed.data);
        return; // save() scheduled the next refresh
      }
    } catch (err) {
      // The origin forgot the activity: nothing left to heal. Anything else: try again next time.
      if (err instanceof ContractError && err.code === 'not_found') return;
    }
    await this.scheduleRefresh();
  }

  private async save(snapshot: ActivitySnapshot, signedAt = this.signedAt): Promise<void> {
    await this.ctx.storage.put({ [SNAPSHOT_KEY]: snapshot, [SIGNED_AT_KEY]: signedAt });
    this.snapshot = snapshot;
    this.signedAt = signedAt;
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
