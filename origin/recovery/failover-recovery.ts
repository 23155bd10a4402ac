/**
 * The recovering step of a failover (failover-watch.ts runs it in the process that runs settlement):
 * under the sale's MySQL recovery lock (recovery-lock.ts), stop the sale in Redis (its stock keys go,
 * so every origin process's script answers "not warmed"), rebuild it from MySQL and the surviving
 * Stream (recover.ts), and mark the primaries it was proven on, which reopens it in every process.
 */
import type { ReplicationWatch } from '../redis/replication-watch.js';
import type { Sale } from '../redis/redis-store.js';
import type { SaleRecovery } from '../redis/sale-recovery.js';
import { recoverHoldingLock, type RecoverDeps, type RecoverResult } from './recover.js';
import { withRecoveryLock } from './recovery-lock.js';

/** The same primary identity for every bucket, in order. */
export const samePrimaries = (a: (string | null)[], b: (string | null)[]) =>
  a.length === b.length && a.every((v, i) => v === b[i]);

export type FailoverRecovery =
  | { kind: 'recovered'; result: RecoverResult }
  /** Another process proved the sale on these primaries while this one waited for the lock. */
  | { kind: 'proven_elsewhere' }
  /** The primaries changed again while recovering: not proven for the current ones, the next round retries. */
  | { kind: 'moved' };

/** What the recovering step uses: recover's own needs, stopping the sale in Redis, and the proven primaries. */
export interface FailoverRecoveryDeps extends RecoverDeps {
  recovery: RecoverDeps['recovery'] & Pick<SaleRecovery, 'stopForRecovery'>;
  replication: Pick<ReplicationWatch, 'markProven' | 'primaries' | 'provenPrimaries'>;
}

/**
 * The recovering step, exclusive across processes (the MySQL recovery lock). Whoever got the lock
 * second sees the first one's proof for these very primaries and does not redo it: dropping the
 * stock again would close a sale that is already selling.
 */
export function recoverAfterFailover(
  deps: FailoverRecoveryDeps,
  sale: Sale,
  primaries: string[],
): Promise<FailoverRecovery> {
  return withRecoveryLock(deps.db, sale.activityId, deps.config.RECOVER_LOCK_WAIT_MS, async () => {
    if (samePrimaries(await deps.replication.provenPrimaries(sale), primaries))
      return { kind: 'proven_elsewhere' } as const;
    await deps.recovery.stopForRecovery(sale);
    const result = await recoverHoldingLock(deps, sale.activityId);
    // Proven only for the primaries it ran on: another change meanwhile means another round.
    if (!samePrimaries((await deps.replication.primaries([sale])).get(sale.activityId)!, primaries))
      return { kind: 'moved' } as const;
    await deps.replication.markProven(sale, primaries);
    return { kind: 'recovered', result } as const;
  });
}
