/**
 * The public error contract (docs/design.md §3, §9): every error code, its HTTP status, and the one error
 * type both edge and origin throw. Bodies are `{error, message, traceId}`.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthenticated: 401,
  bad_ticket: 403,
  forbidden: 403,
  not_eligible: 403,
  denied: 403,
  challenge_failed: 403,
  /** A real token on a shadow (rehearsal) sale, or a shadow token on a real one (contract/shadow.ts). */
  shadow_mismatch: 403,
  not_found: 404,
  request_timeout: 408,
  sold_out: 409,
  insufficient_stock: 409,
  limit_exceeded: 409,
  order_timed_out: 409,
  conflict: 409,
  ended: 410,
  payload_too_large: 413,
  too_early: 425,
  rate_limited: 429,
  internal: 500,
  busy: 503,
  line_full: 503,
  paused: 503,
  not_ready: 503,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  traceId: string;
}

/** The one error type of the project: carries a contract code; `onError` turns it into JSON. */
export class ContractError extends Error {
  /**
   * Whether a new ContractError records where it was thrown. The edge turns it off
   * (edge/errors.ts): there a ContractError is the answer to a doomed click, thousands a second,
   * recording the stack costs about as much as building the answer, and nothing reads
   * it — the error handlers log stacks only of errors that are not ContractErrors.
   */
  static recordStack = true;

  readonly code: ErrorCode;
  readonly status: ErrorStatus;
  /** Seconds, for 429 / 503 answers that tell the client when to come back. */
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, options: { retryAfter?: number; cause?: unknown } = {}) {
    const limit = Error.stackTraceLimit;
    if (!ContractError.recordStack) Error.stackTraceLimit = 0;
    super(message, { cause: options.cause });
    Error.stackTraceLimit = limit;
    this.name = 'ContractError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.retryAfter = options.retryAfter;
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, value);
}

export function errorBody(code: ErrorCode, message: string, traceId: string): ErrorBody {
  return { error: code, message, traceId };
}
