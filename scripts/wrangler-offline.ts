/**
 * Runs wrangler with the network and the home folder kept out of it (TOOLCHAIN.md): no metrics, no
 * banner, no cf-object fetch, config in a throw-away XDG_CONFIG_HOME. Usage:
 * `tsx scripts/wrangler-offline.ts <wrangler args...>`; exits with wrangler's status.
 *
 * Secrets never go on wrangler's command line (any local user reads it in `ps`): `runWrangler` writes
 * them to an env file only the owner can read (mode 0600, in the 0700 throw-away folder) and passes
 * `--env-file`; the folder is removed when wrangler exits.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

/** One `NAME='value'` line per secret (dotenv syntax); refuses values dotenv could not carry back. */
export function envFileText(secrets: Record<string, string>): string {
  return Object.entries(secrets)
    .map(([name, value]) => {
      if (/[\r\n]/.test(value)) throw new Error(`${name} must be one line`);
      if (!value.includes("'")) return `${name}='${value}'`;
      if (!/["\\$`]/.test(value)) return `${name}="${value}"`;
      throw new Error(`${name} holds both quote kinds or a backslash; pick another secret`);
    })
    .join('\n')
    .concat('\n');
}

export function runWrangler(
  args: string[],
  opts: {
    secrets?: Record<string, string>;
    /** The text of a wrangler.toml to run with instead of the repository's (see scripts/edge-dev.ts). */
    config?: string;
  } = {},
): Promise<number> {
  const configHome = mkdtempSync(join(tmpdir(), 'wrangler-'));
  const extra: string[] = [];
  if (opts.config !== undefined) {
    const file = join(configHome, 'wrangler.toml');
    writeFileSync(file, opts.config, { mode: 0o600 });
    extra.push('--config', file);
  }
  if (opts.secrets) {
    const file = join(configHome, 'edge-secrets.env');
    writeFileSync(file, envFileText(opts.secrets), { mode: 0o600 });
    extra.push('--env-file', file);
  }
  const child = spawn('npx', ['wrangler', ...args, ...extra], {
    stdio: 'inherit',
    env: offlineWranglerEnv(configHome),
  });
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
