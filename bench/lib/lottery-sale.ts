/**
 * The lottery sale the draw benchmarks create (bench/draw.ts, bench/lottery.ts): open now for an
 * hour, a ten-minute entry window, one unit per user, no eligibility rule — what createActivity takes.
 */
export function lotterySale(sale: {
  activityId: string;
  skuId: string;
  title: string;
  units: number;
  stockBuckets: number;
}) {
  const startsAt = Date.now();
  return {
    activityId: sale.activityId,
    skuId: sale.skuId,
    title: sale.title,
    stock: sale.units,
    startsAt: new Date(startsAt).toISOString(),
    endsAt: new Date(startsAt + 3_600_000).toISOString(),
    maxPerUser: 1,
    paymentTimeoutSeconds: 900,
    userRatePerSec: 1,
    admissionRatePerSec: 5000,
    admissionShards: 4,
    state: 'open' as const,
    admission: 'lottery' as const,
    lotteryWindowMs: 600_000,
    stockBuckets: sale.stockBuckets,
    soldOutThreshold: 0,
    eligibility: null,
    overflow: 'reject' as const,
  };
}
