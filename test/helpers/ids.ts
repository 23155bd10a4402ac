/** Fresh ids per test, so suites sharing one Redis and one MariaDB never see each other's data. */
import { randomInt } from 'node:crypto';

export function uniqueId(): string {
  return String(randomInt(1, 2 ** 47)) + String(randomInt(100, 999));
}
