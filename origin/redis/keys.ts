/**
 * Every Redis key of the product is built here (DESIGN §5). Keys of one activity+SKU share a hash
 * tag, so one script touches one slot and the same code runs on Redis Cluster.
 */
export const CONSUMER_GROUP = 'settle';
/** Hash activityId -> skuId of warmed activities: what settlement consumers look after. */
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
}

export function activityKeys(activityId: string, skuId: string): ActivityKeys {
  const base = `sk:{${activityId}:${skuId}}`;
  return {
    stock: `${base}:stock`,
    holders: `${base}:holders`,
    events: `${base}:events`,
    config: `${base}:cfg`,
    released: `${base}:released`,
    refilled: `${base}:refilled`,
  };
}
