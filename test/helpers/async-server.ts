import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * A node:http server answering with an async handler. A rejection is not left unhandled (which fails
 * the run far from its cause): it is logged and the request's connection is closed, so the test that
 * sent the request sees it fail.
 */
export function createAsyncServer(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Server {
  return createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      console.error('test server handler failed:', err);
      res.destroy();
    });
  });
}
