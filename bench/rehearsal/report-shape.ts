/**
 * The shape of the rehearsal's report (report.json), apart from the code that builds it
 * (report.ts) and the code that draws it (report-html.ts), which both use it.
 */
import type { OrderSuccess } from './baseline.js';
import type { LoadSample, LoadSummary } from './monitor.js';
import type { LatencySummary } from './histogram.js';
import type { RehearsalOptions } from './options.js';
import type { Series } from './recorder.js';
import type { SettlementFacts } from './settlement.js';
import type { WaitingRoomReport } from './waiting-room.js';
import type { DrillReport } from './drill.js';
import type { GuardReport } from './guard.js';
import type { RampReport } from './ramp.js';
import type { CleanupReport } from './shadow-end.js';
import type { StackCost } from './stack-cost.js';

/** A shadow ramp's own parts (`--planned-peak`): the steps and their verdict, the guard, the drill, the cleanup. */
export interface ShadowRun {
  ramp: RampReport;
  guard: GuardReport;
  /** null: skipped (`--no-drill`) or not reached (the guard stopped the rehearsal first). */
  drill: DrillReport | null;
  cleanup: CleanupReport | null;
}

export interface FunnelRow {
  label: string;
  count: number;
  /** `in`: what came in, `reject`: refused at a layer, `pass`: got through a layer, `end`: lifecycle end. */
  kind: 'in' | 'reject' | 'pass' | 'end';
}

export interface Report {
  command: string;
  startedAt: string;
  activityId: string;
  stack: { own: boolean; edgeUrl: string; originUrl: string };
  options: Omit<RehearsalOptions, 'adminToken' | 'userTokenSecret' | 'paymentSecret' | 'metricsToken'>;
  figures: {
    users: number;
    usersArrived: number;
    usersWithTicket: number;
    usersReserved: number;
    stock: number;
    edgeRequests: number;
    loadSeconds: number;
    edgeRequestsPerSecond: number;
    peakRequestsPerSecond: number;
    timeToSoldOutMs: number | null;
    lastReservationMs: number | null;
    settleMs: number | null;
    maxArrivalLagMs: number;
    purchaseP99Ms: number;
    allRequestsP99Ms: number;
  };
  /** The order endpoint's answers during the rehearsal: decided over all (docs/watching-a-sale.md). */
  orderSuccess: OrderSuccess | null;
  funnel: FunnelRow[];
  /** `--overflow queue`: the waiting room as the crowd saw it (absent otherwise). */
  waitingRoom?: WaitingRoomReport;
  outcomes: ({ step: string; status: number; code: string } & LatencySummary)[];
  timeline: ({ second: number } & Record<Series, number>)[];
  /** [ms since the start, orders in MySQL]: settlement keeping up with reservations. */
  settledOverTime: [number, number][];
  settlement: Omit<SettlementFacts, 'lost'> & { lostCount: number; lostSample: string[] };
  /** The load generator's own CPU and event-loop delay, the machine's CPU, and the stack's processes, per second. */
  load: { summary: LoadSummary; generators: LoadSample[][] };
  /** Our own stack's CPU per unit of work against a hello Worker's (null for an existing stack). */
  stackCost: StackCost | null;
  verdict: { ok: boolean; problems: string[]; notes: string[] };
  /** `--planned-peak` (absent otherwise). */
  shadowRun?: ShadowRun;
}
