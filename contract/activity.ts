/**
 * What an activity is, as the origin pushes it to the edge (docs/design.md §9 `PUT /internal/activities/:id`)
 * and how its public state is derived — one rule, used by edge and origin alike.
 */
import { z } from 'zod';
import { isId } from './ids.js';
import { productFieldsSchema, type ProductFields } from './product.js';

export const ACTIVITY_STATES = ['open', 'paused', 'stopped'] as const;
export type ActivitySwitch = (typeof ACTIVITY_STATES)[number];
/** What the edge does with a purchase beyond the admission rate (docs/design.md §10 `overflow`). */
export const OVERFLOW_MODES = ['reject', 'queue'] as const;
export type PublicState = 'upcoming' | 'open' | 'sold_out' | 'paused' | 'ended';

/** Upper bound of quantity per reservation and of `maxPerUser`; larger is a malformed request. */
export const MAX_QUANTITY = 100;

export const ADMISSION_MODES = ['fcfs', 'lottery'] as const;
export type AdmissionMode = (typeof ADMISSION_MODES)[number];
export const LOTTERY_WINDOW_MIN_MS = 100;
export const LOTTERY_WINDOW_MAX_MS = 600_000;
export const LOTTERY_WINDOW_DEFAULT_MS = 3_000;

/**
 * What the public may know of a lottery's draw (docs/design.md §10): the commitment from creation on; the
 * seed and the summary once the winners are final. `entrantsPublished` tells when the list is complete.
 */
export const drawPublicSchema = z.object({
  commitment: z.string().regex(/^[0-9a-f]{64}$/),
  seed: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  /**
   * SHA-256 of the closed entrant list (scheme 2): published from the window's close on,
   * before the seed; every ticket depends on it, and `verify-draw` checks the published list against it.
   */
  entrantsDigest: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  /**
   * The close record (scheme 3), published from the window's close on beside the digest, before the
   * seed: the parameters that decide the outcome, and closeDigest = SHA-256 of them with the digest
   * (origin/lottery/draw-rule.ts closeText). `verify-draw` replays the winners from these units.
   */
  parameters: z
    .object({
      units: z.number().int().min(0),
      maxPerUser: z.number().int().min(1),
      eligibility: z.object({ claim: z.string(), values: z.array(z.string()) }).nullable(),
    })
    .optional(),
  closeDigest: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  /**
   * The draw's rule: 1 (before the digest), 2 (tickets over the digest) or 3 (2, with the scheme bound
   * into the commitment and the close record); absent means 1.
   */
  scheme: z.number().int().min(1).optional(),
  entrants: z.number().int().min(0).optional(),
  /** Entrants passed over at the draw: denied, or not eligible under the rule in force at the close. */
  excluded: z.number().int().min(0).optional(),
  winners: z.number().int().min(0).optional(),
  /** Units on sale when the draw began, and how many of them the winners took. */
  units: z.number().int().min(0).optional(),
  unitsWon: z.number().int().min(0).optional(),
  /** From the window's close to the winners being final. */
  drawMs: z.number().int().min(0).optional(),
  drawnAt: z.string().optional(),
  entrantsPublished: z.boolean().optional(),
});
export type DrawPublic = z.infer<typeof drawPublicSchema>;

const id = z.string().refine(isId, 'must be a decimal positive 64-bit integer');

/** `{"claim": "tier", "values": ["gold"]}`: a JWT claim (string, or array of strings) naming one of the values. */
export const eligibilitySchema = z
  .object({
    claim: z.string().regex(/^[A-Za-z0-9_:.-]{1,64}$/, 'claim must be 1-64 characters of [A-Za-z0-9_:.-]'),
    values: z.array(z.string().min(1).max(100)).min(1).max(100),
  })
  .strict();
export type Eligibility = z.infer<typeof eligibilitySchema>;

export const activityConfigSchema = z.object({
  activityId: id,
  skuId: id,
  title: z.string().min(1).max(200),
  startsAt: z.iso.datetime({ offset: true }),
  endsAt: z.iso.datetime({ offset: true }),
  maxPerUser: z.number().int().min(1).max(MAX_QUANTITY),
  paymentTimeoutSeconds: z.number().int().min(10).max(86_400),
  /** Purchases per second one user may make at the edge (UserGateDO). */
  userRatePerSec: z.number().positive().max(100),
  /** Requests per second the edge forwards to the origin for this activity (all AdmissionDO shards together). */
  admissionRatePerSec: z.number().int().min(1).max(1_000_000),
  admissionShards: z.number().int().min(1).max(64),
  version: z.number().int().min(1),
  /** What is sold, for the sale page: description, priceCents, currency, imageUrl (all optional). */
  ...productFieldsSchema.shape,
  /** docs/design.md §10: `lottery` turns the first `lotteryWindowMs` after startsAt into a draw. */
  /** Absent means `fcfs` / LOTTERY_WINDOW_DEFAULT_MS. */
  admission: z.enum(ADMISSION_MODES).optional(),
  lotteryWindowMs: z.number().int().min(LOTTERY_WINDOW_MIN_MS).max(LOTTERY_WINDOW_MAX_MS).optional(),
  /** Public state sold out once Redis has this many units or fewer (docs/design.md §10); 0 = only when empty. */
  soldOutThreshold: z.number().int().min(0).max(100_000_000).optional(),
  /** Members-only sale: the JWT claim that must hold one of `values`; absent / null = everyone. */
  eligibility: eligibilitySchema.nullable().optional(),
  /**
   * Beyond the admission rate: `reject` → 503 busy + Retry-After; `queue` → a waiting room (docs/design.md §10).
   * Absent means `reject` (snapshots from before the option, hand-written test configs).
   */
  overflow: z.enum(OVERFLOW_MODES).optional(),
  /**
   * A shadow sale (a rehearsal on the production stack, contract/shadow.ts): only shadow tokens may act
   * on it, and no real token. Absent on a real sale. Never in the public body.
   */
  shadow: z.literal(true).optional(),
});
export type ActivityConfig = z.infer<typeof activityConfigSchema>;

/** Body of the edge's `PUT /internal/activities/:id`, and of the origin's `GET /internal/activities/:id`. */
export const activitySnapshotSchema = z.object({
  config: activityConfigSchema,
  state: z.enum(ACTIVITY_STATES),
  soldOut: z.boolean(),
  /** Lottery activities only. */
  draw: drawPublicSchema.optional(),
  /** Units left in Redis and units put on sale so far (initial stock − held back), for `stockHint`. */
  units: z.object({ left: z.number().int().min(0), onSale: z.number().int().min(0) }).optional(),
});
export type ActivitySnapshot = z.infer<typeof activitySnapshotSchema>;

/** Public body of `GET /api/activities/:id` (docs/design.md §3). */
export interface PublicActivity {
  activityId: string;
  skuId: string;
  title: string;
  startsAt: string;
  endsAt: string;
  serverTime: string;
  state: PublicState;
  version: number;
  /** The sale's rule the page shows ("at most N per person"). */
  maxPerUser: number;
  description?: ProductFields['description'];
  priceCents?: ProductFields['priceCents'];
  currency?: ProductFields['currency'];
  imageUrl?: ProductFields['imageUrl'];
  admission?: AdmissionMode;
  lotteryWindowMs?: number;
  /** hex SHA-256 of the draw seed (the seed's 64 hex characters as ASCII), public from creation on. */
  drawCommitment?: string;
  /** Revealed once the winners are final. */
  drawSeed?: string;
  /** SHA-256 of the closed entrant list, public from the window's close on (before drawSeed). */
  drawEntrantsDigest?: string;
  /** Scheme 3: the parameters fixed at the close and the close record's digest, public from the close on. */
  drawParameters?: DrawPublic['parameters'];
  drawCloseDigest?: string;
  draw?: Omit<DrawPublic, 'commitment' | 'seed'>;
  /** Coarse stock left (docs/design.md §10); absent when the edge has no figure yet. */
  stockHint?: StockHint;
}

export type StockHint = 'plenty' | 'limited' | 'few' | 'sold_out';

/**
 * plenty > 50 % of the units on sale left, limited > 10 %, few; sold_out with the public state or at
 * 0. Only while the sale is open or sold out: before the start, paused or ended it would say nothing
 * a buyer can act on.
 */
export function stockHint(s: ActivitySnapshot, now: number): StockHint | undefined {
  const state = publicState(s, now);
  if (state === 'sold_out') return 'sold_out';
  if (state !== 'open' || !s.units) return undefined;
  return hintOf(s.units.left, s.units.onSale);
}

/** The hint bucket of `left` units out of `onSale` (one rule for the edge's hint and the origin's pushes). */
export function hintOf(left: number, onSale: number): StockHint {
  if (left <= 0) return 'sold_out';
  if (left * 2 > onSale) return 'plenty';
  if (left * 10 > onSale) return 'limited';
  return 'few';
}

/** `[startsAt, startsAt + lotteryWindowMs)` for a lottery activity, else null. */
export function lotteryWindow(
  c: Pick<ActivityConfig, 'admission' | 'startsAt' | 'lotteryWindowMs'>,
): { opensAt: number; closesAt: number } | null {
  if (c.admission !== 'lottery') return null;
  const opensAt = Date.parse(c.startsAt);
  return { opensAt, closesAt: opensAt + (c.lotteryWindowMs ?? LOTTERY_WINDOW_DEFAULT_MS) };
}

export function inLotteryWindow(c: ActivityConfig, now: number): boolean {
  const w = lotteryWindow(c);
  return w !== null && now >= w.opensAt && now < w.closesAt;
}

export function publicState(s: ActivitySnapshot, now: number): PublicState {
  if (s.state === 'stopped' || now >= Date.parse(s.config.endsAt)) return 'ended';
  if (now < Date.parse(s.config.startsAt)) return 'upcoming';
  if (s.state === 'paused') return 'paused';
  if (s.soldOut) return 'sold_out';
  return 'open';
}

export function publicActivity(s: ActivitySnapshot, now: number): PublicActivity {
  const c = s.config;
  return {
    activityId: c.activityId,
    skuId: c.skuId,
    title: c.title,
    startsAt: c.startsAt,
    endsAt: c.endsAt,
    serverTime: new Date(now).toISOString(),
    state: publicState(s, now),
    version: c.version,
    maxPerUser: c.maxPerUser,
    // Product fields only when set, so an activity without them keeps the old body.
    ...(c.description !== undefined && { description: c.description }),
    ...(c.priceCents !== undefined && { priceCents: c.priceCents, currency: c.currency }),
    ...(c.imageUrl !== undefined && { imageUrl: c.imageUrl }),
    stockHint: stockHint(s, now),
    ...lotteryFields(s),
  };
}

function lotteryFields(s: ActivitySnapshot): Partial<PublicActivity> {
  if (s.config.admission !== 'lottery') return {};
  const { commitment, seed, ...summary } = s.draw ?? { commitment: undefined, seed: undefined };
  return {
    admission: 'lottery',
    lotteryWindowMs: s.config.lotteryWindowMs ?? LOTTERY_WINDOW_DEFAULT_MS,
    ...(commitment ? { drawCommitment: commitment } : {}),
    ...(s.draw?.entrantsDigest ? { drawEntrantsDigest: s.draw.entrantsDigest } : {}),
    ...(s.draw?.parameters && s.draw.closeDigest
      ? { drawParameters: s.draw.parameters, drawCloseDigest: s.draw.closeDigest }
      : {}),
    ...(seed ? { drawSeed: seed, draw: summary } : {}),
  };
}
