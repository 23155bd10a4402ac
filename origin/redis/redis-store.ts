/**
 * The Redis store: the one way the origin touches Redis, as one object per job that share one
 * RedisConnection (connection.ts). Each job object is built on its own from the connection, so a
 * service can be handed exactly the one it uses:
 *
 *   requests        the purchase's decision on the request path (reservation-requests.ts)
 *   lotteryEntries  entries, the draw's reservations and winners (lottery-entries.ts)
 *   sales           warm-up, the switch, units left, release, refill, tranches (sale-stock.ts)
 *   registry        the warmed sales settlement looks after; a sale's keys expiring (sale-registry.ts)
 *   access          the eligibility rule and the deny list the scripts read (sale-access.ts)
 *   streams         consumer groups, Stream consumers, an admin's requeue (sale-streams.ts)
 *   ledger          reconciliation's snapshot and the Streams' reservations (ledger-reads.ts)
 *   recovery        stop for recovery, recover, stranded borrows (sale-recovery.ts)
 *   replication     primaries, replicas, proven primaries, replica pause, node figures (replication-watch.ts)
 *   soldOut         sold-out transitions between origin processes (sold-out-channel.ts)
 *
 * Each Lua script has one module in scripts/ that names its keys, lays out its arguments and
 * decodes its reply; the job objects run them, callers never see KEYS. A sale's stock may be split
 * into buckets (docs/design.md §10), each on its own hash tag; callers never see them.
 */
import { RedisConnection, type RedisConnectionOptions } from './connection.js';
import { LedgerReads } from './ledger-reads.js';
import { LotteryEntries } from './lottery-entries.js';
import { ReplicationWatch } from './replication-watch.js';
import { ReservationRequests, type ReservationRequestOptions } from './reservation-requests.js';
import { SaleAccess } from './sale-access.js';
import { SaleRecovery } from './sale-recovery.js';
import { SaleRegistry } from './sale-registry.js';
import { SaleStock } from './sale-stock.js';
import { SaleStreams } from './sale-streams.js';
import { SoldOutChannel } from './sold-out-channel.js';

export type { Sale } from './sale.js';
export type { RefillResult } from './scripts/refill.js';
export type { DenyRevision } from './scripts/deny.js';
export { parseEntry } from './lottery-entries.js';
export type { PrimaryReplication } from './replication-watch.js';

export type RedisStoreOptions = RedisConnectionOptions & ReservationRequestOptions;

export class RedisStore {
  readonly requests: ReservationRequests;
  readonly lotteryEntries: LotteryEntries;
  readonly sales: SaleStock;
  readonly registry: SaleRegistry;
  readonly access: SaleAccess;
  readonly streams: SaleStreams;
  readonly ledger: LedgerReads;
  readonly recovery: SaleRecovery;
  readonly replication: ReplicationWatch;
  readonly soldOut: SoldOutChannel;

  constructor(
    readonly connection: RedisConnection,
    opts: ReservationRequestOptions = {},
  ) {
    this.requests = new ReservationRequests(connection, opts);
    this.lotteryEntries = new LotteryEntries(connection, this.requests);
    this.registry = new SaleRegistry(connection);
    this.sales = new SaleStock(connection, this.registry);
    this.access = new SaleAccess(connection);
    this.streams = new SaleStreams(connection);
    this.ledger = new LedgerReads(connection);
    this.recovery = new SaleRecovery(connection, this.sales, this.registry);
    this.replication = new ReplicationWatch(connection);
    this.soldOut = new SoldOutChannel(connection);
  }

  static async connect(opts: RedisStoreOptions): Promise<RedisStore> {
    return new RedisStore(await RedisConnection.connect(opts), opts);
  }

  /** Ends every connection of every job object. */
  close(): Promise<void> {
    return this.connection.close();
  }
}
