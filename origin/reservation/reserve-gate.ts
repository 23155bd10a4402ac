/**
 * RESERVE_MAX_IN_FLIGHT: the one gate of an origin in front of `POST /internal/reserve` (a step of
 * reserve-chain.ts), one per process so requests through both ways in count together.
 * A purchase shed here answers 503 `busy` and counts in seckill_reserve_total{code="busy"}.
 */
import type { OriginConfig } from '../platform/config.js';
import { InFlightGate } from '../platform/http/middleware.js';
import type { Metrics } from '../platform/metrics.js';

/** What the reserve gate uses: its cap, and the counter of purchases it sheds. */
export interface ReserveGateDeps {
  config: Pick<OriginConfig, 'RESERVE_MAX_IN_FLIGHT'>;
  metrics: Metrics;
}

/**
 * RESERVE_MAX_IN_FLIGHT: build one per origin and hand it to every reserve chain it runs, so they
 * count together.
 */
export function createReserveGate(deps: ReserveGateDeps): InFlightGate {
  return new InFlightGate({
    max: deps.config.RESERVE_MAX_IN_FLIGHT,
    onShed: () => deps.metrics.reserveOutcomes.inc({ code: 'busy' }),
  });
}
