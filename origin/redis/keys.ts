/**
 * Every Redis key of the product is built here (docs/design.md §5, §10). Keys of one stock bucket share a
 * hash tag, so one script touches one slot and the same code runs on Redis Cluster. A sale with one
 * bucket keeps the tag `{A:S}`; with B > 1 buckets, bucket b has the tag `{A:S:b}`, so buckets
 * spread over the cluster's shards, each with its own Stream and consumer group.
 *
 * A keyspace puts REDIS_KEY_PREFIX in front of every name — the bucket keys, the registry and the
 * pub/sub channel — so two stacks sharing one Redis never see each other's sales (as BullMQ's
 * `prefix`). The prefix goes before the hash tag and never contains braces, so the tag stays the slot.
 */
import { KEY_PREFIX_PATTERN } from '../platform/config.js';

export const CONSUMER_GROUP = 'settle';

export interface ActivityKeys {
  stock: string;
  holders: string;
  events: string;
  config: string;
  released: string;
  refilled: string;
  /** Borrows of users whose home is this bucket: reservationId -> pending | confirmed | abandoned. */
  borrowing: string;
  /** Units this bucket lent to other buckets' users: reservationId -> "quantity|homeBucket". */
  lent: string;
  /** Lottery (docs/design.md §10): hash userId -> quantity of the entries. */
  entrants: string;
  /** Lottery: list of `userId:quantity` in entry order — the closed entrant list the draw digests and pages through. */
  entryList: string;
  /** Lottery: hash userId -> JSON of the JWT claims forwarded with the entry (eligibility at the draw). */
  entrantClaims: string;
  /** Lottery: absent while entries are open, then `closed`, then `drawn`. */
  draw: string;
  /** Lottery: hash userId -> reservationId of the draw's winners. */
  winners: string;
  /** Lottery: set of the entrants the draw passed over (denied, or not eligible at the close). */
  drawExcluded: string;
  /** Hash releaseId -> units: tranches of held-back stock already added (docs/design.md §10). */
  tranches: string;
  /**
   * Deny list: hash userId -> signed revision of the user's row (+ denied, − allowed
   * again). Every bucket holds its own copy, so the scripts read it in the bucket's slot.
   */
  denied: string;
}

export interface Keyspace {
  readonly prefix: string;
  /** Hash activityId -> skuId (or `skuId:buckets` when B > 1) of warmed activities: what consumers look after. */
  readonly registry: string;
  /** Pub/sub channel carrying `<activityId>:<1|0>` sold-out transitions between origin instances. */
  readonly soldOutChannel: string;
  activity(activityId: string, skuId: string, bucket?: number, buckets?: number): ActivityKeys;
}

export function keyspace(prefix = ''): Keyspace {
  if (!KEY_PREFIX_PATTERN.test(prefix)) throw new Error(`bad Redis key prefix ${JSON.stringify(prefix)}`);
  return {
    prefix,
    registry: `${prefix}sk:activities`,
    soldOutChannel: `${prefix}sk:soldout`,
    activity(activityId, skuId, bucket = 0, buckets = 1) {
      const tag = buckets === 1 ? `{${activityId}:${skuId}}` : `{${activityId}:${skuId}:${bucket}}`;
      const base = `${prefix}sk:${tag}`;
      return {
        stock: `${base}:stock`,
        holders: `${base}:holders`,
        events: `${base}:events`,
        config: `${base}:cfg`,
        released: `${base}:released`,
        refilled: `${base}:refilled`,
        borrowing: `${base}:borrowing`,
        lent: `${base}:lent`,
        entrants: `${base}:entrants`,
        entryList: `${base}:entry-list`,
        entrantClaims: `${base}:entrant-claims`,
        draw: `${base}:draw`,
        winners: `${base}:winners`,
        drawExcluded: `${base}:draw-excluded`,
        tranches: `${base}:tranches`,
        denied: `${base}:denied`,
      };
    },
  };
}

/** The keyspace without a prefix (REDIS_KEY_PREFIX unset): docs/design.md §5's names as written. */
const UNPREFIXED = keyspace('');
export const ACTIVITY_REGISTRY_KEY = UNPREFIXED.registry;
export function activityKeys(activityId: string, skuId: string, bucket = 0, buckets = 1): ActivityKeys {
  return UNPREFIXED.activity(activityId, skuId, bucket, buckets);
}
