/**
 * The repo's Prometheus config (ops/prometheus/prometheus.yml) made to run somewhere: the origin
 * to scrape, the scrape and evaluation interval, rule files by absolute path, and a bearer-token
 * file when the origin's /metrics needs METRICS_TOKEN. Used by `npm start` and the watching test;
 * the rules themselves (windows, `for:`) are the repo's, unchanged.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROMETHEUS_DIR = fileURLToPath(new URL('../ops/prometheus/', import.meta.url));

export function prometheusConfig(opts: { target: string; intervalSeconds?: number; tokenFile?: string }): string {
  let text = readFileSync(join(PROMETHEUS_DIR, 'prometheus.yml'), 'utf8')
    .replace(/^(\s+- )(\S+\.yml)$/gm, (_, lead: string, file: string) => `${lead}${join(PROMETHEUS_DIR, file)}`)
    .replace(/- 127\.0\.0\.1:3000$/m, `- ${opts.target}`);
  if (opts.intervalSeconds !== undefined)
    text = text
      .replace(/scrape_interval: \d+s/, `scrape_interval: ${opts.intervalSeconds}s`)
      .replace(/evaluation_interval: \d+s/, `evaluation_interval: ${opts.intervalSeconds}s`);
  if (opts.tokenFile)
    text = text.replace(
      /^(\s+)metrics_path: \/metrics$/m,
      (line, indent: string) =>
        `${line}\n${indent}authorization:\n${indent}  credentials_file: ${JSON.stringify(opts.tokenFile)}`,
    );
  return text;
}
