/**
 * Bodies the origin pushes to the edge's internal API (docs/design.md §9, §10): the live list and the
 * deny-list changes. The edge validates with them (edge/routes/internal.ts); the internal OpenAPI
 * document is generated from them (contract/openapi/internal.ts).
 */
import { z } from 'zod';
import { isId } from './ids.js';

/** Largest live list accepted; the body limit (MAX_INTERNAL_BODY_BYTES) bounds it first. */
export const MAX_LIVE_ACTIVITIES = 10_000;

/** `PUT /internal/activities`: the origin's full list of live activities. */
export const liveListSchema = z
  .object({
    activityIds: z.array(z.string().refine(isId, 'activityIds must be contract ids')).max(MAX_LIVE_ACTIVITIES),
  })
  .strict();

/** Deny-list entries per push (the origin sends DENY_PUSH_BATCH ≤ this). */
export const MAX_DENY_ENTRIES = 1_000;

/** `PUT /internal/deny`: deny-list changes; an entry older than the revision the edge holds is ignored. */
export const denyPushSchema = z
  .object({
    users: z
      .array(
        z
          .object({
            userId: z.string().refine(isId, 'userId must be a contract id'),
            denied: z.boolean(),
            revision: z.number().int().min(1).max(4_294_967_295),
          })
          .strict(),
      )
      .max(MAX_DENY_ENTRIES),
  })
  .strict();
