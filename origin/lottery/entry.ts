/**
 * A purchase that meets a lottery (docs/design.md §10): inside the window it becomes the user's one entry
 * (lua/enter-6.lua, no stock moves); between the window's close and the final winners it is turned
 * away with 503 `busy` + Retry-After; after that `null` — the caller reserves FCFS as usual.
 */
import { entryIdOf } from '../../contract/ids.js';
import { REFUSALS, refusalError } from '../../contract/refusals.js';
import type { EntryResponse, ReserveRequest } from '../../contract/reservation.js';
import type { Metrics } from '../platform/metrics.js';
import type { LotteryEntries } from '../redis/lottery-entries.js';
import { scriptRefusalError } from '../redis/script-refusals.js';
import type { ActivityCatalog } from '../sale/catalog.js';
import type { LotteryAdmission } from './admission.js';

/** What a purchase meeting a lottery uses: the sale, its admission phase, the entry script, the outcome counter. */
export interface LotteryEntryDeps {
  catalog: Pick<ActivityCatalog, 'resolve'>;
  admission: Pick<LotteryAdmission, 'phase' | 'isFcfs'>;
  entries: Pick<LotteryEntries, 'enter'>;
  metrics: Metrics;
}

export interface EntryAnswer {
  /** 202 a new entry, 200 the same user's entry again. */
  status: 200 | 202;
  body: EntryResponse;
}

export async function lotteryPurchase(deps: LotteryEntryDeps, req: ReserveRequest): Promise<EntryAnswer | null> {
  const sale = await deps.catalog.resolve(req.activityId);
  const phase = await deps.admission.phase(sale);
  if (phase === 'fcfs') return null;
  if (phase === 'drawing') throw refusalError(REFUSALS.drawing);

  // The deny list and the eligibility rule bind entries as they bind purchases (lua/enter-6.lua).
  const result = await deps.entries.enter({
    ...sale,
    userId: req.userId,
    quantity: req.quantity,
    claims: req.claims,
  });
  const body: EntryResponse = { status: 'entered', entryId: entryIdOf(req.activityId, req.userId) };
  switch (result.kind) {
    case 'entered':
      deps.metrics.reserveOutcomes.inc({ code: 'entered' });
      return { status: 202, body };
    case 'repeat':
      deps.metrics.reserveOutcomes.inc({ code: 'entered_again' });
      return { status: 200, body };
    case 'closed':
      // Another origin's clock closed the window first: the draw has begun.
      throw refusalError(REFUSALS.drawing);
    default:
      throw scriptRefusalError(result.kind);
  }
}
