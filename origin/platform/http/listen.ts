/** Opens one HTTP listener for a fetch handler, with the connection bounds the settings give (docs/configuration.md). */
import type { AddressInfo } from 'node:net';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';

/** A plain Node request listener: what a route answered before the Hono app is (reserve-fast-path.ts). */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** How long a connection and its requests may take; every figure is a setting. */
export interface ConnectionBounds {
  HEADERS_TIMEOUT_MS: number;
  REQUEST_TIMEOUT_MS: number;
  KEEP_ALIVE_TIMEOUT_MS: number;
  MAX_CONNECTIONS: number;
  TIMEOUT_CHECK_MS: number;
}

export async function listen(
  fetch: (req: Request) => Response | Promise<Response>,
  port: number,
  host: string,
  bounds: ConnectionBounds,
  /** Routes answered before the Hono app (reserve-fast-path.ts); the rest reach `fetch`. */
  before: (next: RequestListener) => RequestListener = (next) => next,
) {
  // Node's defaults hold a slow client for minutes (headers 60 s, whole request 300 s, checked every
  // 30 s); the body's own, shorter deadline is BODY_TIMEOUT_MS in the app (a JSON 408).
  const server = createServer(
    {
      headersTimeout: bounds.HEADERS_TIMEOUT_MS,
      requestTimeout: bounds.REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: bounds.TIMEOUT_CHECK_MS,
    },
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- @hono/node-server's listener answers its own errors (a 500) and never rejects; Node ignores the promise
    before(getRequestListener(fetch)),
  );
  // The edge keeps connections open; keep them longer than its idle timeout to avoid resets.
  server.keepAliveTimeout = bounds.KEEP_ALIVE_TIMEOUT_MS;
  server.maxConnections = bounds.MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  return { server, url: `http://${hostInUrl}:${(server.address() as AddressInfo).port}` };
}
