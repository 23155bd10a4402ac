/**
 * `npm run edge` (wrangler dev) gets its secrets through an owner-only env file, not `--var` on its
 * command line: no process's arguments carry a secret, and the Worker still has them (issue 16).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { signEdgeRequest } from '../../contract/signing.js';
import { freePort } from '../../bench/lib/stack.js';
import { randomHex } from '../../contract/ids.js';
import { waitFor } from '../helpers/origin.js';
import { envFileText } from '../../scripts/wrangler-offline.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SECRETS = {
  USER_TOKEN_SECRET: `user-${randomHex(12)}`,
  TICKET_KEYS: `k1:ticket-${randomHex(12)}`,
  EDGE_ORIGIN_SECRET: `edge-${randomHex(12)}`,
};
let child: ChildProcess | undefined;

afterAll(async () => {
  if (child?.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    /* gone */
  }
  await new Promise<void>((resolve) => (child!.exitCode !== null ? resolve() : child!.once('exit', () => resolve())));
});

it('no command line carries a secret; the Worker verifies a push signed with the file-passed secret', async () => {
  const [port, inspector] = [await freePort(), await freePort()];
  child = spawn(process.execPath, ['--import', 'tsx', 'scripts/edge-dev.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...SECRETS, EDGE_PORT: String(port), EDGE_INSPECTOR_PORT: String(inspector) },
    stdio: 'ignore',
    detached: true,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    () => fetch(`${url}/api/activities/1`).then((r) => r.status, () => 0),
    (s) => s === 404,
    120_000,
    250,
  );

  const commandLines = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout;
  expect(commandLines).toContain(`--port ${port}`); // ps does list wrangler's arguments …
  for (const value of Object.values(SECRETS)) expect(commandLines).not.toContain(value); // … but no secret

  const push = async (secret: string) => {
    const body = JSON.stringify({ activityIds: [] });
    const headers = await signEdgeRequest(secret, { method: 'PUT', pathWithQuery: '/internal/activities', body });
    return (await fetch(`${url}/internal/activities`, { method: 'PUT', headers, body })).status;
  };
  expect(await push(SECRETS.EDGE_ORIGIN_SECRET)).toBe(200);
  expect(await push('not-the-secret-0123456789')).toBe(401);
}, 180_000);

it('the env file carries values dotenv reads back verbatim, and refuses what it could not', () => {
  expect(envFileText({ A: 'k1:x', B: "it's" })).toBe("A='k1:x'\nB=\"it's\"\n");
  expect(() => envFileText({ A: 'two\nlines' })).toThrow(/one line/);
});
