/** The lifecycle loops' shape (origin/platform/periodic.ts): when the next round comes, and giving way while something is busy. */
import { expect, it } from 'vitest';
import { createLogger } from '../../../origin/platform/logger.js';
import { PeriodicJob, YieldWhileBusy } from '../../../origin/platform/periodic.js';

class Recorder extends PeriodicJob {
  readonly at: number[] = [];
  constructor(
    everyMs: number,
    private readonly answers: (boolean | number)[],
  ) {
    super('recorder', everyMs, createLogger('silent', 'test'));
  }
  round(): Promise<boolean | number> {
    this.at.push(performance.now());
    return Promise.resolve(this.answers.shift() ?? false);
  }
}

it('runs the next round at once after true, after the delay a round names, else after everyMs', async () => {
  const job = new Recorder(10_000, [true, 150, 20_000]);
  job.start();
  await new Promise((r) => setTimeout(r, 400));
  // true: the second round at once; 150: the third 150 ms later; 20 s: capped at everyMs (10 s), not due yet.
  expect(job.at).toHaveLength(3);
  expect(job.at[1]! - job.at[0]!).toBeLessThan(50);
  expect(job.at[2]! - job.at[1]!).toBeGreaterThanOrEqual(145);
  const stopped = performance.now();
  await job.stop();
  // stop() wakes the wait: it does not sit out the delay.
  expect(performance.now() - stopped).toBeLessThan(1_000);
  expect(job.at).toHaveLength(3);
});

it('yields while busy, for maxMs in a row at most, then lets one round run and waits again', () => {
  let busy = true;
  const y = new YieldWhileBusy(1_000, () => busy);
  expect(y.yields(0)).toBe(true);
  expect(y.yields(999)).toBe(true);
  expect(y.yields(1_000)).toBe(false); // waited maxMs: this round runs
  expect(y.yields(1_001)).toBe(true); // a new wait begins
  expect(y.yields(2_000)).toBe(true);
  busy = false;
  expect(y.yields(2_001)).toBe(false);
  busy = true;
  expect(y.yields(2_002)).toBe(true); // the wait starts afresh after a round that was not held
  expect(y.yields(3_001)).toBe(true);
  expect(y.yields(3_002)).toBe(false);
  expect(new YieldWhileBusy(0, () => true).yields(0)).toBe(false); // 0: never yields
});
