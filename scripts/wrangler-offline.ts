/**
 * Runs wrangler with the network and the home folder kept out of it (TOOLCHAIN.md): no metrics, no
 * banner, no cf-object fetch, config in a throw-away XDG_CONFIG_HOME. Usage:
 * `tsx scripts/wrangler-offline.ts <wrangler args...>`; exits with wrangler's status.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function offlineWranglerEnv(configHome: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    WRANGLER_SEND_METRICS: 'false',
    WRANGLER_HIDE_BANNER: 'true',
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    XDG_CONFIG_HOME: configHome,
  };
}

export function runWrangler(args: string[]): Promise<number> {
  const configHome = mkdtempSync(join(tmpdir(), 'wrangler-'));
  const child = spawn('npx', ['wrangler', ...args], { stdio: 'inherit', env: offlineWranglerEnv(configHome) });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      rmSync(configHome, { recursive: true, force: true });
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exit(await runWrangler(process.argv.slice(2)));
}
