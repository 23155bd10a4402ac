/**
 * Calls from the edge to the origin's internal API (docs/design.md §9): signed with EDGE_ORIGIN_SECRET,
 * carrying a W3C traceparent, bounded by ORIGIN_TIMEOUT_MS. An origin that is down, slow, or
 * answers something outside the contract becomes 503 `unavailable` (fail closed) — never a hang.
 * The client only ever reads a generic message; what went wrong (timeout, status, the origin's own
 * text) goes to the log with the trace id.
 */
import {
  ContractError,
  isErrorCode,
  ORIGIN_ANSWER_CODES,
  REFUSALS,
  signEdgeRequest,
  traceparentFor,
  type ErrorCode,
} from '../contract/index.js';
import { countOriginCall } from './figures.js';
import type { EdgeSettings } from './settings.js';

export interface OriginAnswer<T> {
  status: number;
  body: T;
}

/** What a client reads when the origin cannot serve it; the reason is in the log. */
export const UNAVAILABLE_MESSAGE = REFUSALS.unavailable.message;
/** Origin codes whose own message may describe internals (Redis, timeouts): replaced for the client. */
const GENERIC_MESSAGE: Partial<Record<ErrorCode, string>> = {
  unavailable: UNAVAILABLE_MESSAGE,
  not_ready: 'the sale is not ready yet; try again shortly',
};

/** 503 `unavailable` for the client; `detail` goes to the log line with the trace id. */
export function originFailure(traceId: string, detail: string, cause?: unknown): ContractError {
  console.warn(JSON.stringify({ level: 'warn', traceId, msg: 'origin call failed', detail }));
  return new ContractError('unavailable', UNAVAILABLE_MESSAGE, { cause });
}

export async function callOrigin<T>(
  settings: Pick<EdgeSettings, 'originUrl' | 'originTimeoutMs' | 'edgeOriginSecret'>,
  req: {
    method: 'GET' | 'POST';
    path: string;
    body?: unknown;
    traceId: string;
    /** Made for a shadow token's request: counted with shadow traffic (edge/figures.ts). */
    shadow?: boolean;
  },
): Promise<OriginAnswer<T>> {
  const body = req.body === undefined ? undefined : JSON.stringify(req.body);
  const signed = await signEdgeRequest(settings.edgeOriginSecret, {
    method: req.method,
    pathWithQuery: req.path,
    body: body ?? '',
  });
  const headers: Record<string, string> = { ...signed, traceparent: traceparentFor(req.traceId) };
  if (body !== undefined) headers['content-type'] = 'application/json';

  // One deadline for connect, headers and body alike.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), settings.originTimeoutMs);
  let status: number;
  let text: string;
  let retryAfter: string | null;
  try {
    const res = await fetch(new URL(req.path, settings.originUrl), {
      method: req.method,
      headers,
      body,
      signal: abort.signal,
    });
    status = res.status;
    retryAfter = res.headers.get('retry-after');
    text = await res.text();
    countOriginCall(req.path, 'answered', req.shadow === true);
  } catch (err) {
    countOriginCall(req.path, abort.signal.aborted ? 'timeout' : 'unreachable', req.shadow === true);
    const why = abort.signal.aborted
      ? `origin did not answer within ${settings.originTimeoutMs} ms`
      : 'origin unreachable';
    throw originFailure(req.traceId, why, err);
  } finally {
    clearTimeout(timer);
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw originFailure(req.traceId, `origin answered ${status} without JSON`);
  }
  if (status >= 200 && status < 300) return { status, body: parsed as T };

  const code = (parsed as { error?: unknown } | null)?.error;
  // The codes the origin answers with (the contract's table) pass through; anything else fails closed.
  if (isErrorCode(code) && ORIGIN_ANSWER_CODES.has(code)) {
    const message = (parsed as { message?: unknown }).message;
    const seconds = retryAfter && /^\d{1,6}$/.test(retryAfter) ? Number(retryAfter) : undefined;
    const generic = GENERIC_MESSAGE[code];
    if (generic && typeof message === 'string') {
      console.warn(
        JSON.stringify({ level: 'warn', traceId: req.traceId, msg: 'origin refused', code, detail: message }),
      );
    }
    throw new ContractError(code, generic ?? (typeof message === 'string' ? message.slice(0, 200) : code), {
      retryAfter: seconds,
    });
  }
  // 401 here means edge and origin disagree on EDGE_ORIGIN_SECRET: an operator problem, not the user's.
  throw originFailure(req.traceId, `origin answered ${status}${isErrorCode(code) ? ` ${code}` : ''}`);
}
