/** Structured JSON logs (pino). Every line about a purchase carries its traceId. */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, name = 'origin'): Logger {
  return pino({ name, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}
