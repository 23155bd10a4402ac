/**
 * The alert rules in ops/prometheus are valid and every alert has a `promtool test rules` unit test
 * that passes (ops/prometheus/tests/alerts.test.yml).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { assertPrometheusInstalled, PROMETHEUS_DIR, PROMTOOL_PATH, run } from '../helpers/prometheus.js';

const alertNames = (text: string, pattern: RegExp) => new Set([...text.matchAll(pattern)].map((m) => m[1]!));

beforeAll(() => assertPrometheusInstalled());

it('the repo config and every rules file pass promtool check (the generated baseline too)', async () => {
  const { stdout } = await run(PROMTOOL_PATH, ['check', 'config', join(PROMETHEUS_DIR, 'prometheus.yml')]);
  expect(stdout).toContain('SUCCESS: 3 rule files found');
  const baseline = readFileSync(join(PROMETHEUS_DIR, 'baseline.yml'), 'utf8');
  expect(baseline).toMatch(/record: seckill:order_success_ratio:baseline\n\s+expr: vector\((0|1|0\.\d+)\)/);
});

it('every alert in alerts.yml is exercised by the promtool unit tests, and they pass', async () => {
  const rules = alertNames(readFileSync(join(PROMETHEUS_DIR, 'alerts.yml'), 'utf8'), /^\s+- alert: (\w+)$/gm);
  const tests = readFileSync(join(PROMETHEUS_DIR, 'tests/alerts.test.yml'), 'utf8');
  const tested = alertNames(tests, /^\s+- alertname: (\w+)$/gm);
  // Every alert firing in at least one case, not only "no alert" cases.
  const fired = alertNames(tests, /- alertname: (\w+)\n\s+eval_time: \w+\n\s+exp_alerts:\n/g);
  expect(rules.size).toBe(14);
  expect([...rules].filter((a) => !tested.has(a))).toEqual([]);
  expect([...rules].filter((a) => !fired.has(a))).toEqual([]);
  const { stdout } = await run(PROMTOOL_PATH, ['test', 'rules', join(PROMETHEUS_DIR, 'tests/alerts.test.yml')]);
  expect(stdout).toContain('SUCCESS');
});
