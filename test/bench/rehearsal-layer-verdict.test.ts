/**
 * The shadow ramp's judgements, pure: given each step's signals, the first layer to give way and
 * its rate (bench/rehearsal/layer-verdict.ts); the guard's trip on the real series
 * (bench/rehearsal/guard.ts); /metrics parsed into a sample and a histogram's p99 between two
 * readings (bench/rehearsal/stack-signals.ts); what a ticket pair says about a user rate (drill.ts).
 */
import { describe, expect, it } from 'vitest';
import { obeysRate, ratesDistinguishable } from '../../bench/rehearsal/drill.js';
import { baselineOf, guardTrip } from '../../bench/rehearsal/guard.js';
import { firstToGiveWay, layersGivingWay, type StepSignals } from '../../bench/rehearsal/layer-verdict.js';
import type { GuardOptions } from '../../bench/rehearsal/ramp-options.js';
import { p99Between, parseSample, type StackSample } from '../../bench/rehearsal/stack-signals.js';

/** A healthy step at `rate`: every signal well inside its line. */
function calm(step: number, rate: number): StepSignals {
  return {
    step,
    targetRate: rate,
    seconds: 10,
    offeredRate: rate,
    servedRate: rate,
    edge: {
      requests: rate * 10,
      tickets: rate * 4,
      ticketsRateLimited: 0,
      busy: 0,
      errors: 0,
      admittedRate: rate / 2,
      admissionRate: 5000,
    },
    origin: { answers: rate * 4, undecided: 0, unavailable: 0 },
    redis: { calls: rate * 5, p99Ms: 5, p99Above: false, errors: 0 },
    stream: { backlogStart: 0, backlogEnd: 3 },
    mysql: { readings: 10, saturatedReadings: 0, poolLimit: 16, slowTransactions: 0 },
    settlement: { behindStart: 2, behindEnd: 5 },
  };
}

describe('first to give way', () => {
  it('no layer crossed its line: none gave way, up to the last step', () => {
    const v = firstToGiveWay([calm(1, 100), calm(2, 200), calm(3, 300)]);
    expect(v.first).toBeNull();
    expect(v.text).toBe('no layer gave way up to step 3 (300 req/s offered of 300 planned)');
  });

  it('names the first step where a layer crossed, with its offered rate', () => {
    const s3 = calm(3, 300);
    s3.offeredRate = 280;
    s3.origin = { answers: 1000, undecided: 40, unavailable: 12 };
    const s4 = calm(4, 400);
    s4.redis.errors = 9;
    const v = firstToGiveWay([calm(1, 100), calm(2, 200), s3, s4]);
    expect(v.first).toMatchObject({ layer: 'origin', step: 3, targetRate: 300, offeredRate: 280 });
    expect(v.text).toMatch(
      /^origin gave way first, at step 3 \(280 req\/s offered of 300 planned\): 40 of 1000 reserve calls/,
    );
  });

  it('several in one step: the deepest is named first, the others alongside', () => {
    const s = calm(2, 200);
    s.redis.p99Ms = 250;
    s.origin.undecided = 100;
    s.edge.errors = 100;
    const v = firstToGiveWay([calm(1, 100), s]);
    expect(v.first?.layer).toBe('redis');
    expect(v.first?.why).toBe('Redis call p99 ≤ 250 ms (line 100 ms)');
    expect(v.alongside.map((g) => g.layer)).toEqual(['origin', 'edge']);
  });

  it('a Redis p99 beyond the histogram is above its last bound', () => {
    const s = calm(1, 100);
    s.redis = { ...s.redis, p99Ms: 250, p99Above: true };
    expect(layersGivingWay(s)).toEqual([{ layer: 'redis', why: 'Redis call p99 above 250 ms (line 100 ms)' }]);
  });

  it('each layer by its own signal', () => {
    const cases: [string, (s: StepSignals) => void][] = [
      ['mysql', (s) => (s.mysql.saturatedReadings = 8)],
      ['settlement', (s) => (s.settlement = { behindStart: 10, behindEnd: 500 })],
      ['stream', (s) => (s.stream = { backlogStart: 0, backlogEnd: 400 })],
      ['edge', (s) => (s.edge.ticketsRateLimited = 100)],
    ];
    for (const [layer, spoil] of cases) {
      const s = calm(1, 100);
      spoil(s);
      expect(layersGivingWay(s).map((g) => g.layer)).toEqual([layer]);
    }
  });

  it('503 busy is the edge giving way only while the origin gets less than the admission rate', () => {
    const atRate = calm(1, 1000);
    atRate.edge = { ...atRate.edge, busy: 500, admittedRate: 95, admissionRate: 100 };
    expect(layersGivingWay(atRate)).toEqual([]);
    const below = calm(1, 1000);
    below.edge = { ...below.edge, busy: 500, admittedRate: 40, admissionRate: 100 };
    expect(layersGivingWay(below).map((g) => g.layer)).toEqual(['edge']);
  });
});

const GUARD: GuardOptions = {
  successShare: 0.9,
  baselineRate: null,
  baselineMs: 5000,
  p99Ms: 250,
  streamLag: 1000,
  windowMs: 5000,
  everyMs: 1000,
  minAnswers: 20,
};

function sample(at: number, decided: number, total: number, reserve: [number, number][], lag = 0): StackSample {
  return {
    at,
    real: { answers: { decided, total }, reserveBuckets: reserve, streamLagMax: lag },
    shadow: { answers: { decided: 0, total: 0 }, busy: 0, backlog: 0, settled: 0 },
    redis: { buckets: [], errors: 0 },
    mysql: { poolInUse: 0, poolLimit: 16, slowTransactions: 0 },
  };
}

describe('the guard', () => {
  const fast: [number, number][] = [
    [0.01, 100],
    [0.25, 100],
    [1, 100],
    [Infinity, 100],
  ];
  it('stops on the real success rate below its share of the baseline, says why', () => {
    const from = sample(0, 100, 100, []);
    expect(guardTrip(GUARD, 1, from, sample(5000, 190, 200, []))).toBeNull();
    expect(guardTrip(GUARD, 1, from, sample(5000, 150, 200, []))).toBe(
      'real order success rate 50.0 % over 5.0 s (50 of 100) is below 0.9 × the baseline 100.0 %',
    );
    // Too few real answers in the window: not judged.
    expect(guardTrip(GUARD, 1, from, sample(5000, 100, 110, []))).toBeNull();
  });

  it('stops on the real reserve p99 and on the real Stream lag', () => {
    const slow: [number, number][] = [
      [0.01, 100],
      [0.25, 101],
      [1, 200],
      [Infinity, 200],
    ];
    const from = sample(0, 0, 0, fast);
    expect(guardTrip(GUARD, 1, from, sample(5000, 0, 0, fast))).toBeNull();
    expect(guardTrip(GUARD, 1, from, sample(5000, 0, 0, slow))).toBe(
      'real reserve p99 ≤ 1000 ms over 5.0 s (100 calls) is above 250 ms',
    );
    expect(guardTrip(GUARD, 1, from, sample(5000, 0, 0, fast, 1500))).toBe(
      'real Stream lag 1500 entries is above 1000',
    );
  });

  it('the baseline: given, measured before the first step, or assumed 100 % without enough answers', () => {
    expect(baselineOf({ ...GUARD, baselineRate: 0.95 }, null, null)).toEqual({
      rate: 0.95,
      source: 'option',
      answers: 0,
    });
    expect(baselineOf(GUARD, sample(0, 10, 10, []), sample(5000, 108, 110, []))).toEqual({
      rate: 0.98,
      source: 'measured',
      answers: 100,
    });
    expect(baselineOf(GUARD, sample(0, 0, 0, []), sample(5000, 5, 5, []))).toEqual({
      rate: 1,
      source: 'assumed',
      answers: 5,
    });
  });
});

describe('stack signals', () => {
  it('reads the real and shadow series apart from /metrics text', () => {
    const text = [
      '# HELP seckill_order_answers_total x',
      'seckill_order_answers_total{outcome="reserved",decided="true"} 40',
      'seckill_order_answers_total{outcome="unavailable",decided="false"} 2',
      'seckill_shadow_order_answers_total{outcome="reserved",decided="true"} 900',
      'seckill_shadow_order_answers_total{outcome="busy",decided="false"} 7',
      'seckill_reserve_duration_seconds_bucket{le="0.01",code="ok"} 30',
      'seckill_reserve_duration_seconds_bucket{le="+Inf",code="ok"} 40',
      'seckill_reserve_duration_seconds_bucket{le="0.01",code="sold_out"} 2',
      'seckill_reserve_duration_seconds_bucket{le="+Inf",code="sold_out"} 2',
      'seckill_stream_lag{activity="11"} 3',
      'seckill_stream_lag{activity="12"} 8',
      'seckill_shadow_stream_backlog{activity="99"} 17',
      'seckill_shadow_stream_backlog{activity="98"} 5',
      'seckill_redis_errors_total 4',
      'seckill_db_pool_connections{state="in_use"} 16',
      'seckill_db_pool_connections{state="idle"} 0',
      'seckill_db_pool_limit 16',
    ].join('\n');
    const s = parseSample(text, '99', 123);
    expect(s.real.answers).toEqual({ decided: 40, total: 42 });
    expect(s.shadow.answers).toEqual({ decided: 900, total: 907 });
    expect(s.shadow.busy).toBe(7);
    expect(s.real.reserveBuckets).toEqual([
      [0.01, 32],
      [Infinity, 42],
    ]);
    expect(s.real.streamLagMax).toBe(8);
    expect(s.shadow.backlog).toBe(17);
    expect(s.redis.errors).toBe(4);
    expect(s.mysql).toEqual({ poolInUse: 16, poolLimit: 16, slowTransactions: 0 });
  });

  it("a histogram's p99 between two readings is its bucket's upper bound", () => {
    const a: [number, number][] = [
      [0.001, 10],
      [0.1, 10],
      [Infinity, 10],
    ];
    expect(p99Between(a, a)).toBeNull();
    expect(
      p99Between(a, [
        [0.001, 110],
        [0.1, 110],
        [Infinity, 110],
      ]),
    ).toBe(1);
    expect(
      p99Between(a, [
        [0.001, 60],
        [0.1, 110],
        [Infinity, 110],
      ]),
    ).toBe(100);
    expect(
      p99Between(a, [
        [0.001, 60],
        [0.1, 60],
        [Infinity, 110],
      ]),
    ).toBe(Infinity);
  });
});

describe('a ticket pair and a user rate', () => {
  const answer = (status: number, retryAfterMs = 0) => ({ status, code: '', body: null, retryAfterMs, ms: 1 });
  it('a bucket of one: the second ticket is 429 with the rate’s Retry-After', () => {
    expect(obeysRate(answer(429, 4000), 0.25)).toBe(true);
    expect(obeysRate(answer(429, 1000), 0.25)).toBe(false);
    expect(obeysRate(answer(429, 1000), 1)).toBe(true);
    expect(obeysRate(answer(200), 1)).toBe(false);
  });
  it('a bucket of two or more: the second ticket is issued', () => {
    expect(obeysRate(answer(200), 2)).toBe(true);
    expect(obeysRate(answer(429, 1000), 2)).toBe(false);
  });
  it('which rates a pair can tell apart', () => {
    expect(ratesDistinguishable(1, 0.25)).toBe(true);
    expect(ratesDistinguishable(4, 1)).toBe(true);
    expect(ratesDistinguishable(1, 0.9)).toBe(true);
    expect(ratesDistinguishable(0.4, 0.35)).toBe(false);
    expect(ratesDistinguishable(5, 3)).toBe(false);
  });
});
