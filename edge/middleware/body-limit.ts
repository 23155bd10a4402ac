/**
 * Bounded request bodies (docs/design.md §10 "Body limits"): before any signature, JWT or ticket work, a body
 * over the route's limit is refused with 413 `payload_too_large` — from the declared Content-Length
 * when there is one, else by counting while reading a chunked body — and a body that does not
 * arrive within the deadline (a Content-Length larger than what is sent) is refused with 400
 * `bad_request` instead of holding the request open. The body read here is kept as text for the
 * handler (`c.get('body')`).
 *
 * hono/body-limit counts the same way but has no deadline and trusts a small Content-Length, so
 * the handler's own read could still hang; hence this one.
 *
 * A chunked body found too large is read on to its end (discarded, never held) before the 413 goes
 * out, for at most `drainMs` (BODY_DRAIN_MS) — a lingering close, as nginx does: answering at once and dropping
 * the rest resets the connection under whoever is still sending, and a client or proxy that writes
 * the whole body before it reads the answer sees a network error instead of the 413. Under
 * `wrangler dev` that is its proxy Worker, which reports any failed non-GET forward as "Your worker
 * restarted mid-request" (503): workerd never restarted.
 */
import type { MiddlewareHandler } from 'hono';
import { ContractError } from '../../contract/index.js';
import type { EdgeEnv } from '../context.js';

export interface BodyLimitOptions {
  /** Largest body accepted for this request, in bytes, and how long it may take to arrive, in ms. */
  limits: (env: Env, method: string, path: string) => { maxBytes: number; timeoutMs: number; drainMs: number };
}

export function bodyLimit(options: BodyLimitOptions): MiddlewareHandler<EdgeEnv> {
  return async function bodyLimit(c, next) {
    const req = c.req.raw;
    const { maxBytes, timeoutMs, drainMs } = options.limits(c.env, req.method, c.req.path);
    const declared = req.headers.get('content-length');
    if (declared !== null) {
      if (!/^\d{1,15}$/.test(declared)) throw new ContractError('bad_request', 'Content-Length is not a number');
      if (Number(declared) > maxBytes) throw tooLarge(maxBytes);
    }
    // A declared length alone is what the runtime delivers, no more (HTTP framing): one native read,
    // no chunk loop. Chunked — or chunked beside a Content-Length, which workerd passes through with
    // the whole chunked body — is counted while it is read.
    if (declared !== null && req.headers.get('transfer-encoding') === null)
      c.set('body', declared === '0' ? '' : await readDeclared(req, maxBytes, timeoutMs));
    // A request body's chunks are bytes (workerd types the stream's chunks as any).
    else
      c.set(
        'body',
        req.body ? await readBounded(req.body as ReadableStream<Uint8Array>, maxBytes, timeoutMs, drainMs) : '',
      );
    return next();
  };
}

function tooLarge(maxBytes: number): ContractError {
  return new ContractError('payload_too_large', `the request body is larger than ${maxBytes} bytes`);
}

/** One decoder for every request: a whole-buffer decode keeps no state between calls. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * A body of declared length (already checked against the limit): read whole by the runtime, raced
 * against the deadline. A doomed click pays one native read instead of a JS reader loop.
 */
async function readDeclared(req: Request, maxBytes: number, timeoutMs: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let bytes: ArrayBuffer | 'late';
  try {
    // One promise settled by whichever comes first (no Promise.race, no second promise): the read's
    // late end, after the deadline, settles nothing and is no one's error.
    bytes = await new Promise<ArrayBuffer | 'late'>((resolve, reject) => {
      timer = setTimeout(() => resolve('late'), timeoutMs);
      req.arrayBuffer().then(resolve, reject);
    });
  } catch {
    throw new ContractError('bad_request', 'the request body could not be read'); // the client went away
  } finally {
    clearTimeout(timer);
  }
  if (bytes === 'late') throw new ContractError('bad_request', 'the request body did not arrive in time');
  if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes); // never, with HTTP framing; cheap to be sure
  return decode(bytes);
}

function decode(bytes: ArrayBuffer | Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new ContractError('bad_request', 'the request body is not UTF-8');
  }
}

async function readBounded(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  timeoutMs: number,
  drainMs: number,
): Promise<string> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), timeoutMs);
  });
  try {
    for (;;) {
      const step = await Promise.race([reader.read(), deadline]);
      if (step === 'late') throw new ContractError('bad_request', 'the request body did not arrive in time');
      if (step.done) break;
      size += step.value.byteLength;
      if (size > maxBytes) {
        chunks.length = 0;
        clearTimeout(timer);
        await drain(reader, drainMs);
        throw tooLarge(maxBytes);
      }
      chunks.push(step.value);
    }
  } catch (err) {
    reader.cancel().catch(() => undefined);
    if (err instanceof ContractError) throw err;
    throw new ContractError('bad_request', 'the request body could not be read'); // the client went away
  } finally {
    clearTimeout(timer);
  }
  const all = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return decode(all);
}

/** Reads and discards the rest of a body until it ends or `drainMs` have passed (then it is cancelled). */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, drainMs: number): Promise<void> {
  if (drainMs === 0) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const enough = new Promise<'enough'>((resolve) => {
    timer = setTimeout(() => resolve('enough'), drainMs);
  });
  try {
    for (;;) {
      const rest = await Promise.race([reader.read(), enough]);
      if (rest === 'enough' || rest.done) return;
    }
  } finally {
    clearTimeout(timer);
  }
}
