/** The rehearsal's baseline: the success rate read from /metrics text, and the rules file it writes. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { orderAnswersFrom, successBetween, writeBaseline } from '../../bench/rehearsal/baseline.js';
import { PROMTOOL_PATH, run } from '../helpers/prometheus.js';

const scrape = (reserved: number, soldOut: number, busy: number) => `# HELP seckill_order_answers_total x
# TYPE seckill_order_answers_total counter
seckill_order_answers_total{outcome="reserved",decided="true"} ${reserved}
seckill_order_answers_total{outcome="sold_out",decided="true"} ${soldOut}
seckill_order_answers_total{outcome="busy",decided="false"} ${busy}
seckill_reserve_total{code="ok"} 999
`;

it('the success rate over a rehearsal is the growth of decided answers over the growth of all answers', () => {
  expect(orderAnswersFrom(scrape(3, 1, 1))).toEqual({ decided: 4, total: 5 });
  expect(successBetween(orderAnswersFrom(scrape(3, 1, 1)), orderAnswersFrom(scrape(103, 851, 47)))).toEqual({
    decided: 950,
    total: 996,
    rate: 950 / 996,
  });
  expect(successBetween(orderAnswersFrom(scrape(1, 0, 0)), orderAnswersFrom(scrape(1, 0, 0))).rate).toBeNull();
});

it('the baseline file is a rules file promtool accepts, holding the rate', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baseline-'));
  try {
    const file = join(dir, 'baseline.yml');
    writeBaseline(file, 950 / 996, {
      measuredAt: '2026-12-01T10:00:00.000Z',
      answers: 996,
      users: 10,
      stock: 5,
      curve: 'spike',
    });
    const { stdout } = await run(PROMTOOL_PATH, ['check', 'rules', file]);
    expect(stdout).toContain('SUCCESS: 1 rules found');
    expect(readFileSync(file, 'utf8')).toContain('expr: vector(0.953815)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
