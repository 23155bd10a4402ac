/** Command-line options of `npm run rehearsal`, with defaults and validation. */
import { parseArgs } from 'node:util';
import { BENCH_EDGE_SECRETS, BENCH_SECRETS } from '../lib/stack.js';
import { CURVES, DEFAULT_MIX, type Curve, type Mix } from './population.js';
import { parseRamp, RAMP_ARGS, RAMP_USAGE, type RampOptions } from './ramp-options.js';

export interface RehearsalOptions {
  users: number;
  stock: number;
  curve: Curve;
  /** Window over which the punctual crowd arrives (ms after the start). */
  durationMs: number;
  /** The sale starts this long after the driver does; early users arrive in this lead-in. */
  leadMs: number;
  /** In-flight requests at most, over all workers (one keep-alive socket each). */
  concurrency: number;
  /** Load-generator processes the crowd is spread over (1: this process drives it). */
  workers: number;
  mix: Mix;
  /** Share of winners who poll their reservation, and of pollers who then pay. */
  pollRatio: number;
  payRatio: number;
  paymentTimeoutSeconds: number;
  /** Requests/s the edge forwards to the origin (the activity's admission rate). */
  admissionRate: number;
  /** Beyond the admission rate: 503 busy (`reject`) or a waiting room (`queue`). */
  overflow: 'reject' | 'queue';
  seed: number;
  firstUserId: number;
  outDir: string;
  /** Where the measured order success rate is written as the alerts' baseline; null: not written. */
  baselinePath: string | null;
  /** Bearer token of the origin's /metrics (METRICS_TOKEN) when driving an existing stack. */
  metricsToken?: string;
  progress: boolean;
  /** Give up waiting for settlement after this long. */
  settleTimeoutMs: number;
  /** Driving an existing stack instead of starting one. */
  edgeUrl?: string;
  originUrl?: string;
  /** A shadow sale (docs/rehearsal.md): shadow tokens, the shadow tables; for a production stack. */
  shadow: boolean;
  activityId?: string;
  mysqlUrl: string;
  adminToken: string;
  userTokenSecret: string;
  paymentSecret: string;
  /** `lottery`: the first `lotteryWindowMs` of the sale is a draw (docs/design.md §10). */
  admission: 'fcfs' | 'lottery';
  lotteryWindowMs: number;
  /**
   * How the crowd reaches our own edge: `direct` (the Worker's own socket, as production has no
   * extra hop) or `miniflare` (through Miniflare's entry worker, a second hop).
   */
  edgeEntry: 'direct' | 'miniflare';
  /** Seconds of a hello Worker after the sale, the floor of the edge's CPU per request (0: none). */
  helloSeconds: number;
  /** `--planned-peak`: the step ramp, its guard and the switch drill instead of one crowd (ramp-options.ts). */
  ramp: RampOptions | null;
}

const USAGE = `npm run rehearsal -- [options]
  --users N            distinct users (default 100000)
  --stock N            units on sale (default 10000)
  --curve C            arrival curve: spike | ramp | uniform (default spike)
  --duration S         seconds over which the crowd arrives (default 20)
  --lead S             seconds between the driver's start and the sale's start (default 3)
  --concurrency N      requests in flight at most, over all workers (default 64)
  --workers N          load-generator processes sharing the crowd and the concurrency (default 1)
  --mix k=v,...        shares of retrier, bot, early, forger, sharer (default ${Object.entries(DEFAULT_MIX)
    .map(([k, v]) => `${k}=${v}`)
    .join(',')})
  --poll-ratio R       share of winners who poll their reservation (default 0.5)
  --pay-ratio R        share of pollers who pay once ordered (default 0.7)
  --payment-timeout S  the activity's payment timeout, seconds (default 900; ≤ 120 waits for the timeouts)
  --admission-rate N   requests/s the edge forwards to the origin (default 5000)
  --overflow M         beyond the admission rate: reject (503 busy) | queue (waiting room) (default reject)
  --seed N             crowd seed (default 1)
  --out DIR            report directory (default reports/rehearsal-<timestamp>)
  --baseline FILE      where a passing rehearsal writes the order success rate it measured, the
                       alerts' baseline (default ops/prometheus/baseline.yml; METRICS_TOKEN is sent
                       to an existing origin's /metrics)
  --no-baseline        do not write it
  --progress / --no-progress   live progress line on stderr (default: when stderr is a TTY)
  --settle-timeout S   give up waiting for settlement after S seconds (default 300)
  --admission A        fcfs | lottery (default fcfs); lottery: purchases in the window are entries, drawn at its close
  --lottery-window S   the lottery window, seconds (default: --duration, so the arriving crowd enters)
  --edge-entry E       direct (the Worker's own socket) | miniflare (through Miniflare's entry worker, a
                       second hop production does not have) (default direct)
  --hello-seconds S    after the sale, drive a hello Worker on the same runtime and entry for S
                       seconds: the floor of the edge's CPU per request (default 5; 0: none)
 Existing stack (otherwise the rehearsal starts origin + edge itself):
  --edge-url URL --origin-url URL [--activity ID] [--mysql-url URL] [--shadow]
  --shadow             create a shadow sale and drive it with shadow tokens: its rows go to the
                       shadow tables, its events to SHADOW_ORDER_EVENTS_URL (docs/rehearsal.md)
  secrets from ADMIN_TOKEN, USER_TOKEN_SECRET, PAYMENT_WEBHOOK_SECRET in the environment
${RAMP_USAGE}`;

function num(name: string, raw: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number in [${min}, ${max}]`);
  return n;
}

function parseMix(raw: string | undefined): Mix {
  const mix = { ...DEFAULT_MIX };
  if (!raw) return mix;
  for (const part of raw.split(',')) {
    const [k, v] = part.split('=');
    if (!k || !(k in mix)) throw new Error(`--mix: unknown kind "${k}" (one of ${Object.keys(mix).join(', ')})`);
    mix[k as keyof Mix] = num(`mix ${k}`, v, 0, 1);
  }
  if (Object.values(mix).reduce((s, v) => s + v, 0) > 1) throw new Error('--mix shares add up to more than 1');
  return mix;
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): RehearsalOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      users: { type: 'string', default: '100000' },
      stock: { type: 'string', default: '10000' },
      curve: { type: 'string', default: 'spike' },
      duration: { type: 'string', default: '20' },
      lead: { type: 'string', default: '3' },
      concurrency: { type: 'string', default: '64' },
      workers: { type: 'string', default: '1' },
      mix: { type: 'string' },
      'poll-ratio': { type: 'string', default: '0.5' },
      'pay-ratio': { type: 'string', default: '0.7' },
      'payment-timeout': { type: 'string', default: '900' },
      'admission-rate': { type: 'string', default: '5000' },
      overflow: { type: 'string', default: 'reject' },
      seed: { type: 'string', default: '1' },
      'hello-seconds': { type: 'string', default: '5' },
      'first-user': { type: 'string', default: '10000001' },
      out: { type: 'string' },
      baseline: { type: 'string', default: 'ops/prometheus/baseline.yml' },
      'no-baseline': { type: 'boolean' },
      progress: { type: 'boolean' },
      'no-progress': { type: 'boolean' },
      'settle-timeout': { type: 'string', default: '300' },
      admission: { type: 'string', default: 'fcfs' },
      'lottery-window': { type: 'string' },
      'edge-entry': { type: 'string', default: 'direct' },
      'edge-url': { type: 'string' },
      'origin-url': { type: 'string' },
      shadow: { type: 'boolean' },
      activity: { type: 'string' },
      'mysql-url': { type: 'string' },
      ...RAMP_ARGS,
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (!CURVES.includes(values.curve as Curve)) throw new Error(`--curve must be one of ${CURVES.join(', ')}`);
  if (values.overflow !== 'reject' && values.overflow !== 'queue')
    throw new Error('--overflow must be reject or queue');
  if (Boolean(values['edge-url']) !== Boolean(values['origin-url']))
    throw new Error('--edge-url and --origin-url go together (the origin is needed for admin calls and payments)');
  if (values.admission !== 'fcfs' && values.admission !== 'lottery')
    throw new Error('--admission must be fcfs or lottery');
  if (values['edge-entry'] !== 'direct' && values['edge-entry'] !== 'miniflare')
    throw new Error('--edge-entry must be direct or miniflare');
  const external = Boolean(values['edge-url']);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return {
    users: num('users', values.users, 1, 1e9),
    stock: num('stock', values.stock, 1, 100_000_000),
    curve: values.curve as Curve,
    durationMs: num('duration', values.duration, 0.1) * 1000,
    leadMs: num('lead', values.lead, 1) * 1000,
    concurrency: num('concurrency', values.concurrency, 1, 100_000),
    workers: num('workers', values.workers, 1, 64),
    mix: parseMix(values.mix),
    pollRatio: num('poll-ratio', values['poll-ratio'], 0, 1),
    payRatio: num('pay-ratio', values['pay-ratio'], 0, 1),
    paymentTimeoutSeconds: num('payment-timeout', values['payment-timeout'], 10, 86_400),
    admissionRate: num('admission-rate', values['admission-rate'], 1, 1_000_000),
    overflow: values.overflow,
    seed: num('seed', values.seed, 0, 2 ** 32 - 1),
    firstUserId: num('first-user', values['first-user'], 1, 2 ** 52),
    outDir: values.out ?? `reports/rehearsal-${stamp}`,
    // A shadow run measures no baseline: the real answers it would read are production's.
    baselinePath: values['no-baseline'] || values.shadow ? null : values.baseline,
    metricsToken: env.METRICS_TOKEN || undefined,
    progress: values['no-progress'] ? false : (values.progress ?? Boolean(process.stderr.isTTY)),
    settleTimeoutMs: num('settle-timeout', values['settle-timeout'], 1) * 1000,
    edgeUrl: values['edge-url']?.replace(/\/$/, ''),
    originUrl: values['origin-url']?.replace(/\/$/, ''),
    shadow: values.shadow ?? false,
    activityId: values.activity,
    mysqlUrl: values['mysql-url'] ?? env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/seckill_rehearsal',
    adminToken: external ? (env.ADMIN_TOKEN ?? '') : BENCH_SECRETS.ADMIN_TOKEN,
    userTokenSecret: external ? (env.USER_TOKEN_SECRET ?? '') : BENCH_EDGE_SECRETS.USER_TOKEN_SECRET,
    paymentSecret: external ? (env.PAYMENT_WEBHOOK_SECRET ?? '') : BENCH_SECRETS.PAYMENT_WEBHOOK_SECRET,
    admission: values.admission,
    lotteryWindowMs: num('lottery-window', values['lottery-window'] ?? values.duration, 0.1, 600) * 1000,
    edgeEntry: values['edge-entry'],
    helloSeconds: num('hello-seconds', values['hello-seconds'], 0, 600),
    ramp: parseRamp(values, values.shadow ?? false, num),
  };
}
