/**
 * An entry's poll (docs/design.md §10): `drawing` until the winners are final, then the winner's reservation
 * (the §3 body, from reservationStatus) or `lost`. Only the entrant may read it.
 */
import { ContractError } from '../../contract/errors.js';
import type { EntryPollBody } from '../../contract/reservation.js';
import type { LotteryEntries } from '../redis/lottery-entries.js';
import { reservationStatus, type ReservationStatusDeps } from './status.js';

/** What an entry's status uses: the draw's phase and the user's entry, then the winner's reservation lookup. */
export interface EntryStatusDeps extends ReservationStatusDeps {
  entries: Pick<LotteryEntries, 'drawPhase' | 'entryOf'>;
}

export async function entryStatus(
  deps: EntryStatusDeps,
  entry: { activityId: string; userId: string },
  userId: string,
): Promise<EntryPollBody> {
  if (entry.userId !== userId) throw new ContractError('forbidden', 'this entry belongs to someone else');
  const sale = await deps.catalog.resolve(entry.activityId).catch((err) => {
    if (err instanceof ContractError && err.code === 'not_found') throw new ContractError('not_found', 'no such entry');
    throw err;
  });
  const [phase, mine] = await Promise.all([deps.entries.drawPhase(sale), deps.entries.entryOf(sale, userId)]);
  if (mine.quantity === null) throw new ContractError('not_found', 'no such entry');
  if (phase !== 'drawn') return { status: 'drawing' };
  if (mine.reservationId) return reservationStatus(deps, mine.reservationId, userId);
  return { status: 'lost' };
}
