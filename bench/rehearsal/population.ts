/**
 * The crowd, generated lazily: user i (0 ≤ i < users) has a deterministic kind and arrival time
 * derived from (seed, i), so a million users cost nothing until they arrive and a run can be
 * repeated. Arrivals follow a curve over the sale's first `durationMs`; "early" users arrive in the
 * lead-in before the start instead.
 */
export type Curve = 'spike' | 'ramp' | 'uniform';
export const CURVES: readonly Curve[] = ['spike', 'ramp', 'uniform'];

/** What a user does (the mix of docs/design.md §7's "realistic sale"). */
export type UserKind =
  | 'click' // one ticket, one purchase; follows Retry-After on 429/503 a couple of times
  | 'retrier' // clicks, then repeats the purchase (same Idempotency-Key; sometimes a new key)
  | 'bot' // one ticket, then hammers purchase with new keys as fast as it can
  | 'early' // arrives before the start (425), comes back when told
  | 'forger' // purchase with a made-up ticket
  | 'sharer'; // purchase with another user's genuine ticket

export interface Mix {
  retrier: number;
  bot: number;
  early: number;
  forger: number;
  sharer: number;
}

export const DEFAULT_MIX: Mix = { retrier: 0.08, bot: 0.01, early: 0.03, forger: 0.005, sharer: 0.005 };

export interface Arrival {
  index: number;
  userId: string;
  kind: UserKind;
  /** ms relative to the sale's start (negative for early users). */
  at: number;
  /** A uniform [0,1) draw of the user's own, for its later choices (poll? pay? new key?). */
  luck: number;
}

/** splitmix32-style hash → [0, 1). */
export function unit(seed: number, i: number, salt: number): number {
  let h = (seed ^ Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(salt + 1, 0x85ebca6b)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x21f0aaad);
  h = Math.imul(h ^ (h >>> 15), 0x735a2d97);
  return ((h ^ (h >>> 15)) >>> 0) / 4294967296;
}

/** Time (0..1 of the duration) by which a fraction u of the punctual users has arrived. */
export function arrivalFraction(curve: Curve, u: number): number {
  switch (curve) {
    case 'uniform':
      return u;
    case 'ramp':
      return Math.sqrt(u); // rate grows linearly through the window
    case 'spike': {
      // Exponential decay, most of the crowd in the first seconds: half within ~9% of the window.
      const k = 8;
      return -Math.log(1 - u * (1 - Math.exp(-k))) / k;
    }
  }
}

export class Population {
  /** Punctual arrivals come in index order (so their times are monotonic); early users are listed apart. */
  constructor(
    readonly opts: {
      users: number;
      seed: number;
      firstUserId: number;
      curve: Curve;
      durationMs: number;
      leadMs: number;
      mix: Mix;
    },
  ) {}

  kindOf(i: number): UserKind {
    const { mix, seed } = this.opts;
    let r = unit(seed, i, 1);
    for (const kind of ['early', 'bot', 'forger', 'sharer', 'retrier'] as const) {
      if (r < mix[kind]) return kind;
      r -= mix[kind];
    }
    return 'click';
  }

  arrival(i: number): Arrival {
    const { users, seed, firstUserId, curve, durationMs, leadMs } = this.opts;
    const kind = this.kindOf(i);
    const at =
      kind === 'early'
        ? -leadMs * (0.1 + 0.9 * unit(seed, i, 2))
        : arrivalFraction(curve, (i + 0.5) / users) * durationMs;
    return { index: i, userId: String(firstUserId + i), kind, at, luck: unit(seed, i, 3) };
  }
}
