/**
 * Secrets and vars the edge runs with in tests, benchmarks and the rehearsal (never production).
 * Pure data so both Node and workerd test code can import it.
 */
export const TEST_TICKET_KEY_NEW = { kid: 'k2', secret: 'test-ticket-key-two-000000000000' };
export const TEST_TICKET_KEY_OLD = { kid: 'k1', secret: 'test-ticket-key-one-000000000000' };

export const TEST_EDGE_SECRETS = {
  USER_TOKEN_SECRET: 'test-user-token-secret-0000000000',
  /** Two keys: k2 signs, k1 (the rotated-out one) still verifies. */
  TICKET_KEYS: `${TEST_TICKET_KEY_NEW.kid}:${TEST_TICKET_KEY_NEW.secret},${TEST_TICKET_KEY_OLD.kid}:${TEST_TICKET_KEY_OLD.secret}`,
  EDGE_ORIGIN_SECRET: 'test-edge-origin-secret-00000000',
} as const;
