/**
 * A real local HTTP receiver of downstream order events for tests: verifies each delivery's
 * signature, records every arrival in order, and answers what `decide` says (2xx, a failure
 * status, or no answer for a while).
 */
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAsyncServer } from './async-server.js';
import {
  EVENT_SIGNATURE_HEADER,
  EVENT_TIMESTAMP_HEADER,
  verifyOrderEvent,
  type OrderEventBody,
} from '../../contract/order-events.js';

export interface Arrival {
  event: OrderEventBody;
  signed: boolean;
  answered: number;
  /** The request's Authorization header, if any. */
  authorization?: string;
}

export type Decision = { status: number; delayMs?: number };

export async function startEventReceiver(secret: string, decide: (e: OrderEventBody, nth: number) => Decision) {
  const arrivals: Arrival[] = [];
  const seen = new Map<string, number>();
  let inFlight = 0;
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const server = createAsyncServer(async (req, res) => {
    inFlight++;
    try {
      const body = await read(req);
      const signed = await verifyOrderEvent(
        secret,
        {
          body,
          timestamp: req.headers[EVENT_TIMESTAMP_HEADER] as string,
          signature: req.headers[EVENT_SIGNATURE_HEADER] as string,
        },
        { maxAgeMs: 60_000 },
      );
      const event = JSON.parse(body) as OrderEventBody;
      const nth = (seen.get(event.id) ?? 0) + 1;
      seen.set(event.id, nth);
      const d = signed ? decide(event, nth) : { status: 401 };
      if (d.delayMs) await new Promise((r) => setTimeout(r, d.delayMs));
      arrivals.push({ event, signed, answered: d.status, authorization: req.headers.authorization });
      res.writeHead(d.status).end();
    } finally {
      inFlight--;
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/order-events`;
  return {
    url,
    arrivals,
    /** Requests received whose answer has not been sent yet. */
    inFlight: () => inFlight,
    /** Events answered 2xx, by id (first such arrival). */
    delivered(): Map<string, OrderEventBody> {
      const out = new Map<string, OrderEventBody>();
      for (const a of arrivals) if (a.answered < 300 && !out.has(a.event.id)) out.set(a.event.id, a.event);
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** For each order, its delivered event types in order of first successful arrival. */
export function typesPerOrder(arrivals: Arrival[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const a of arrivals) {
    if (a.answered >= 300) continue;
    const list = out.get(a.event.orderNo) ?? [];
    if (!list.includes(a.event.type)) list.push(a.event.type);
    out.set(a.event.orderNo, list);
  }
  return out;
}
