/**
 * Every Redis key of the product is built here (DESIGN §5, §10). Keys of one stock bucket share a
 * hash tag, so one script touches one slot and the same code runs on Redis Cluster. A sale with one
 * bucket keeps the tag `{A:S}`; with B > 1 buckets, bucket b has the tag `{A:S:b}`, so buckets
 * spread over the cluster's shards, each with its own Stream and consumer group.
 */
export const CONSUMER_GROUP = 'settle';
/** Hash activityId -> skuId (or `skuId:buckets` when B > 1) of warmed activities: what consumers look after. */
export const ACTIVITY_REGISTRY_KEY = 'sk:activities';
/** Pub/sub channel carrying `<activityId>:<1|0>` sold-out transitions between origin instances. */
export const SOLD_OUT_CHANNEL = 'sk:soldout';

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
  /** Hash releaseId -> units: tranches of held-back stock already added (DESIGN §10). */
  tranches: string;
}

export function activityKeys(activityId: string, skuId: string, bucket = 0, buckets = 1): ActivityKeys {
  const base = buckets === 1 ? `sk:{${activityId}:${skuId}}` : `sk:{${activityId}:${skuId}:${bucket}}`;
  return {
    stock: `${base}:stock`,
    holders: `${base}:holders`,
    events: `${base}:events`,
    config: `${base}:cfg`,
    released: `${base}:released`,
    refilled: `${base}:refilled`,
    borrowing: `${base}:borrowing`,
    lent: `${base}:lent`,
    tranches: `${base}:tranches`,
  };
}
