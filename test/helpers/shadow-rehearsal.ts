/**
 * The shadow rehearsal (bench/rehearsal.ts `--shadow --planned-peak`) driven in-process against a
 * test stack, as an operator runs it against production: the stack's URLs, its database, the
 * secrets in the environment.
 */
import { parseOptions } from '../../bench/rehearsal/options.js';
import { TEST_EDGE_SECRETS } from './edge-test-secrets.js';
import { TEST_SECRETS } from './origin.js';
import type { TestStack } from './stack.js';

export function rehearsalAgainst(stack: TestStack, args: string[]) {
  return parseOptions(
    [
      ['--edge-url', stack.edge.url],
      ['--origin-url', stack.origin.url],
      ['--mysql-url', stack.origin.db.url],
      ['--shadow'],
      ['--lead', '1'],
      ['--no-progress'],
      args,
    ].flat(),
    {
      ADMIN_TOKEN: TEST_SECRETS.ADMIN_TOKEN,
      USER_TOKEN_SECRET: TEST_EDGE_SECRETS.USER_TOKEN_SECRET,
      PAYMENT_WEBHOOK_SECRET: TEST_SECRETS.PAYMENT_WEBHOOK_SECRET,
    },
  );
}

/** The rehearsal's `say` collecting its lines, and a promise of the first line matching `pattern`. */
export function untilLine(pattern: RegExp) {
  const lines: string[] = [];
  let seen!: () => void;
  const promise = new Promise<void>((resolve) => (seen = resolve));
  return {
    lines,
    seen: promise,
    say(line: string) {
      lines.push(line);
      if (pattern.test(line)) seen();
    },
  };
}
