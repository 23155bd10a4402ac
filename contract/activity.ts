/**
 * What an activity is, as the origin pushes it to the edge (DESIGN §9 `PUT /internal/activities/:id`)
 * and how its public state is derived — one rule, used by edge and origin alike.
 */
import { z } from 'zod';
import { isId } from './ids.js';
import { productFieldsSchema, type ProductFields } from './product.js';

export const ACTIVITY_STATES = ['open', 'paused', 'stopped'] as const;
export type ActivitySwitch = (typeof ACTIVITY_STATES)[number];
export type PublicState = 'upcoming' | 'open' | 'sold_out' | 'paused' | 'ended';

/** Upper bound of quantity per reservation and of `maxPerUser`; larger is a malformed request. */
export const MAX_QUANTITY = 100;

const id = z.string().refine(isId, 'must be a decimal positive 64-bit integer');

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
});
export type ActivityConfig = z.infer<typeof activityConfigSchema>;

/** Body of the edge's `PUT /internal/activities/:id`, and of the origin's `GET /internal/activities/:id`. */
export const activitySnapshotSchema = z.object({
  config: activityConfigSchema,
  state: z.enum(ACTIVITY_STATES),
  soldOut: z.boolean(),
});
export type ActivitySnapshot = z.infer<typeof activitySnapshotSchema>;

/** Public body of `GET /api/activities/:id` (DESIGN §3). */
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
  };
}
