/**
 * W3C trace context: one trace id follows a purchase through the edge log, the origin log, the
 * Stream event and the settlement log.
 */
import { isTraceId, randomHex } from './ids.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The trace id of a well-formed `traceparent`, else null. */
export function traceIdOf(traceparent: string | null | undefined): string | null {
  const m = traceparent ? TRACEPARENT.exec(traceparent.trim()) : null;
  return m && isTraceId(m[1]) ? m[1]! : null;
}

export function newTraceId(): string {
  return crypto.randomUUID().replaceAll('-', '');
}

export function traceparentFor(traceId: string): string {
  return `00-${traceId}-${randomHex(8)}-01`;
}
