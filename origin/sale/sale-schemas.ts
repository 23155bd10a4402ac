/**
 * What an operator may send to create a sale and to change its live switches: the admin API's input
 * schemas, one rule each, the contract's field rules (contract/activity.ts) reused with the admin's
 * defaults. The admin routes, the console's check and the OpenAPI document all read these.
 */
import { z } from 'zod';
import {
  ACTIVITY_STATES,
  ADMISSION_MODES,
  LOTTERY_WINDOW_DEFAULT_MS,
  LOTTERY_WINDOW_MAX_MS,
  LOTTERY_WINDOW_MIN_MS,
  eligibilitySchema,
  OVERFLOW_MODES,
  activityConfigSchema,
} from '../../contract/activity.js';
import { isId } from '../../contract/ids.js';
import { priceIsComplete, productFieldsSchema } from '../../contract/product.js';
import { MAX_STOCK_BUCKETS } from '../redis/buckets.js';

/** A JSON number is the usual slip (ids above 2^53 lose digits as numbers): say what is wanted. */
const id = (name: string) =>
  z
    .string({
      error: (iss) => (iss.input === undefined ? `${name} is required` : `${name} must be a string of digits`),
    })
    .refine(isId, `${name} must be a string of digits (a positive 64-bit integer, e.g. "1001")`);

const ISO_HINT = 'must be an ISO-8601 date-time with a zone, e.g. 2026-12-01T10:00:00Z or 2026-12-01T11:00:00+01:00';
const instant = () => z.iso.datetime({ offset: true, error: ISO_HINT });

/** Operators create sales ahead of time; a window already over can only be a mistake. */
const validWindow = (a: { startsAt: string; endsAt: string }, refinement: z.RefinementCtx) => {
  if (Date.parse(a.endsAt) <= Date.parse(a.startsAt))
    refinement.addIssue({ code: 'custom', message: 'endsAt must be after startsAt', path: ['endsAt'] });
  else if (Date.parse(a.endsAt) <= Date.now())
    refinement.addIssue({
      code: 'custom',
      message: 'endsAt is in the past: this sale would have ended already',
      path: ['endsAt'],
    });
};

/** The contract's field rules (contract/activity.ts), each stated once; the admin adds defaults and its own fields. */
const config = activityConfigSchema.shape;

export const createActivitySchema = z
  .object({
    activityId: id('activityId'),
    skuId: id('skuId'),
    title: config.title,
    stock: z.number().int().min(1, 'stock must be at least 1: a sale with nothing to sell is refused').max(100_000_000),
    // The contract's rule with a hint for the operator's message.
    startsAt: instant(),
    endsAt: instant(),
    maxPerUser: config.maxPerUser.default(1),
    paymentTimeoutSeconds: config.paymentTimeoutSeconds.default(900),
    userRatePerSec: config.userRatePerSec.default(1),
    admissionRatePerSec: config.admissionRatePerSec.default(5_000),
    admissionShards: config.admissionShards.default(4),
    state: z.enum(['open', 'paused']).default('open'),
    /** Redis buckets the stock is split over (docs/design.md §10); more buckets spread a hot sale over cluster shards. */
    stockBuckets: z.number().int().min(1).max(MAX_STOCK_BUCKETS).default(1),
    ...productFieldsSchema.shape,
    admission: z.enum(ADMISSION_MODES).default('fcfs'),
    lotteryWindowMs: z
      .number()
      .int()
      .min(LOTTERY_WINDOW_MIN_MS)
      .max(LOTTERY_WINDOW_MAX_MS)
      .default(LOTTERY_WINDOW_DEFAULT_MS),
    /** Units on sale at the start (default: all of `stock`); the rest is held back for releases. */
    initialRelease: z.number().int().min(0).max(100_000_000).optional(),
    soldOutThreshold: z.number().int().min(0).max(100_000_000).default(0),
    eligibility: eligibilitySchema.nullable().default(null),
    overflow: z.enum(OVERFLOW_MODES).default('reject'),
    /**
     * A shadow sale (docs/rehearsal.md): only shadow tokens may act on it, its rows go to the shadow
     * tables and its events to SHADOW_ORDER_EVENTS_URL. Fixed at creation.
     */
    shadow: z.boolean({ error: 'shadow must be true or false' }).optional(),
  })
  .strict()
  .superRefine(validWindow)
  .refine(priceIsComplete, { message: 'priceCents and currency go together', path: ['currency'] })
  .refine((a) => a.initialRelease === undefined || a.initialRelease <= a.stock, {
    message: 'initialRelease must not exceed stock',
    path: ['initialRelease'],
  })
  .refine((a) => a.admission !== 'lottery' || Date.parse(a.startsAt) + a.lotteryWindowMs < Date.parse(a.endsAt), {
    message: 'the lottery window must close before endsAt',
    path: ['lotteryWindowMs'],
  });
export type CreateActivity = z.infer<typeof createActivitySchema>;

const SHADOW_FIXED =
  'shadow is fixed at creation: a real sale cannot become a shadow sale, nor a shadow sale a real one (create a new sale)';

/** The live switches (docs/design.md §10): any of them, at least one. */
export const patchActivitySchema = z
  .object({
    state: z.enum(ACTIVITY_STATES),
    userRatePerSec: z.number().positive().max(100),
    admissionRatePerSec: z.number().int().min(1).max(1_000_000),
    soldOutThreshold: z.number().int().min(0).max(100_000_000),
    eligibility: eligibilitySchema.nullable(),
    /** Units one user may buy in the sale: the next reservation, waiting-room turn, entry or draw obeys it. */
    maxPerUser: config.maxPerUser,
    /** Named only to refuse it with a clear message: whether a sale is a shadow sale is fixed at creation. */
    shadow: z.never({ error: SHADOW_FIXED }),
  })
  .partial()
  .strict()
  .refine((p) => Object.keys(p).length > 0, { message: 'name at least one setting to change' });
export type ActivityPatch = z.infer<typeof patchActivitySchema>;
