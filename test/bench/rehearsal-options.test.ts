/** The rehearsal's command line: the shadow ramp's options refused with a message naming the fix. */
import { expect, it } from 'vitest';
import { parseOptions } from '../../bench/rehearsal/options.js';

const parse =
  (...args: string[]) =>
  () =>
    parseOptions(args, {});

it('the shadow ramp needs --shadow, and its options need --planned-peak', () => {
  expect(parse('--planned-peak', '400')).toThrow(/--planned-peak needs --shadow/);
  expect(parse('--steps', '3')).toThrow(/--steps is an option of the shadow ramp: it needs --planned-peak/);
  expect(parse('--no-drill')).toThrow(/--no-drill is an option of the shadow ramp/);
  expect(parse('--shadow', '--planned-peak', '400', '--guard-every', '5000', '--guard-window', '2')).toThrow(
    /--guard-every must not be longer than --guard-window/,
  );
});

it('a shadow ramp ramps to 1.5 × the planned peak by default; --hello-seconds is bounded', () => {
  const o = parseOptions(['--shadow', '--planned-peak', '400'], {});
  expect(o.ramp).not.toBeNull();
  expect(o.ramp!.plannedPeak).toBe(400);
  expect(o.ramp!.peakFactor).toBe(1.5);
  expect(o.helloSeconds).toBe(5);
  expect(parse('--hello-seconds', '700')).toThrow(/--hello-seconds must be a number in \[0, 600\]/);
});
