import type { Logger } from '../logger.js';

export type OriginEnv = {
  Variables: {
    traceId: string;
    log: Logger;
    /** The raw request body, read once (signature checks need the exact bytes). */
    rawBody: string;
    /** A reserve's answer when it is not an error: reserved, repeat, entered, entered_again. */
    answer?: 'reserved' | 'repeat' | 'entered' | 'entered_again';
  };
};
