/**
 * Options of the shadow rehearsal's step ramp (`--planned-peak R`), its production guard and its
 * switch drill (docs/rehearsal.md "A shadow rehearsal on the production stack"), with defaults and
 * validation. Every bound of the ramp's loops is one of them, so a run is bounded in steps and time.
 */

export interface RampOptions {
  /** The sale's planned peak, requests/s at the edge. */
  plannedPeak: number;
  /** The last step offers this multiple of the planned peak. */
  peakFactor: number;
  /** Steps from peakFactor × plannedPeak / steps up to peakFactor × plannedPeak. */
  steps: number;
  stepMs: number;
  guard: GuardOptions;
  drill: DrillOptions | null;
}

export interface GuardOptions {
  /** Stop when the real order success rate falls below this share of its baseline. */
  successShare: number;
  /** The real success rate to compare with; null: measured over `baselineMs` before the first step. */
  baselineRate: number | null;
  baselineMs: number;
  /** Stop when the real reserve p99 (the origin's histogram, its bucket's upper bound) exceeds this. */
  p99Ms: number;
  /** Stop when a real sale's Stream has more than this many entries not yet delivered. */
  streamLag: number;
  /** The real signals are judged over this long, read every `everyMs`. */
  windowMs: number;
  everyMs: number;
  /** Fewer real answers than this in the window: the success rate and p99 are not judged. */
  minAnswers: number;
}

export interface DrillOptions {
  /** A switch not obeyed at the edge this long after the admin API answered is named as not taking effect. */
  effectTimeoutMs: number;
  /** A probe click is sent this often while a switch is awaited. */
  probeEveryMs: number;
  /** The lower user rate the drill sets (null: a quarter of the sale's). */
  userRate: number | null;
}

export const RAMP_USAGE = ` Shadow ramp (with --shadow): steps up to a multiple of the planned peak, the guard, the switch drill
  --planned-peak R     the sale's planned peak, requests/s at the edge: the ramp's steps offer up to
                       --peak-factor × R, then the switch drill runs at R
  --peak-factor F      the last step's multiple of the planned peak (default 1.5)
  --steps N            steps of the ramp, evenly spaced up to the top (default 5, at most 50)
  --step-seconds S     length of each step (default 10, at most 600)
  --guard-success-share X  stop when the real order success rate is below X × its baseline (default 0.9)
  --guard-baseline-rate X  the real success rate to compare with (default: measured before the first step)
  --guard-baseline S   seconds of real traffic watched before the first step for that baseline (default 5)
  --guard-p99-ms MS    stop when the real reserve p99 exceeds MS (default 250)
  --guard-stream-lag N stop when a real sale's Stream holds more than N undelivered entries (default 1000)
  --guard-window S     the real signals are judged over the last S seconds (default 5)
  --guard-every MS     how often the signals are read (default 1000)
  --guard-min-answers N  fewer real answers in the window: rate and p99 not judged (default 20)
  --no-drill           skip the switch drill
  --drill-timeout S    a switch not obeyed at the edge after S seconds did not take effect (default 10)
  --drill-probe-every MS  a probe click this often while a switch is awaited (default 50)
  --drill-user-rate R  the lower user rate the drill sets (default: a quarter of the sale's)`;

/** Defaults of the ramp's options (applied in parseRamp, so an option given without --planned-peak is seen). */
const RAMP_DEFAULTS: Record<string, string> = {
  'peak-factor': '1.5',
  steps: '5',
  'step-seconds': '10',
  'guard-success-share': '0.9',
  'guard-baseline': '5',
  'guard-p99-ms': '250',
  'guard-stream-lag': '1000',
  'guard-window': '5',
  'guard-every': '1000',
  'guard-min-answers': '20',
  'drill-timeout': '10',
  'drill-probe-every': '50',
};

const RAMP_STRINGS = [
  'planned-peak',
  'peak-factor',
  'steps',
  'step-seconds',
  'guard-success-share',
  'guard-baseline-rate',
  'guard-baseline',
  'guard-p99-ms',
  'guard-stream-lag',
  'guard-window',
  'guard-every',
  'guard-min-answers',
  'drill-timeout',
  'drill-probe-every',
  'drill-user-rate',
] as const;

export const RAMP_ARGS = {
  ...Object.fromEntries(RAMP_STRINGS.map((k) => [k, { type: 'string' as const }])),
  'no-drill': { type: 'boolean' },
} as Record<(typeof RAMP_STRINGS)[number], { type: 'string' }> & { 'no-drill': { type: 'boolean' } };

type Num = (name: string, raw: string | undefined, min: number, max?: number) => number;

/** null without `--planned-peak`; the ramp needs a shadow sale (its traffic is told from the real one). */
export function parseRamp(
  values: Record<string, string | boolean | undefined>,
  shadow: boolean,
  num: Num,
): RampOptions | null {
  const str = (k: string) => (values[k] as string | undefined) ?? RAMP_DEFAULTS[k];
  if (values['planned-peak'] === undefined) {
    const given = [...RAMP_STRINGS, 'no-drill'].filter((k) => values[k] !== undefined);
    if (given.length) throw new Error(`--${given[0]} is an option of the shadow ramp: it needs --planned-peak`);
    return null;
  }
  if (!shadow)
    throw new Error(
      '--planned-peak needs --shadow: the ramp tells its own traffic from the real one by the shadow claim',
    );
  const windowMs = num('guard-window', str('guard-window'), 1, 600) * 1000;
  const everyMs = num('guard-every', str('guard-every'), 100, 60_000);
  if (everyMs > windowMs) throw new Error('--guard-every must not be longer than --guard-window');
  const baselineRaw = str('guard-baseline-rate');
  return {
    plannedPeak: num('planned-peak', str('planned-peak'), 1, 10_000_000),
    peakFactor: num('peak-factor', str('peak-factor'), 0.1, 100),
    steps: num('steps', str('steps'), 1, 50),
    stepMs: num('step-seconds', str('step-seconds'), 1, 600) * 1000,
    guard: {
      successShare: num('guard-success-share', str('guard-success-share'), 0, 1),
      baselineRate: baselineRaw === undefined ? null : num('guard-baseline-rate', baselineRaw, 0, 1),
      baselineMs: num('guard-baseline', str('guard-baseline'), 0, 600) * 1000,
      p99Ms: num('guard-p99-ms', str('guard-p99-ms'), 1, 600_000),
      streamLag: num('guard-stream-lag', str('guard-stream-lag'), 0),
      windowMs,
      everyMs,
      minAnswers: num('guard-min-answers', str('guard-min-answers'), 1),
    },
    drill: values['no-drill']
      ? null
      : {
          effectTimeoutMs: num('drill-timeout', str('drill-timeout'), 1, 600) * 1000,
          probeEveryMs: num('drill-probe-every', str('drill-probe-every'), 10, 10_000),
          userRate:
            str('drill-user-rate') === undefined ? null : num('drill-user-rate', str('drill-user-rate'), 0.01, 100),
        },
  };
}
