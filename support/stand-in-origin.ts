/**
 * A small real HTTP stand-in for the origin's internal API (docs/design.md §9), for edge tests and the edge
 * benchmark — not a Redis/MySQL mock: it verifies the §9 signature, answers per activity as told,
 * remembers reservations in a map, and counts every call. Tests steer it in-process (Node) or
 * through its unsigned `/__control` endpoints (from workerd).
 *
 * Control API: `PUT /__control/activities/:id` {snapshot?, reserve?} · `GET /__control/calls/:id`
 * → {total, reserve, activity, reservation, traceparents} · `GET /__control/bad-signatures`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ERROR_STATUS,
  activityOfReservation,
  errorBody,
  newReservationId,
  verifyEdgeRequest,
  type ActivitySnapshot,
  type ErrorCode,
  type ReservationBody,
} from '../contract/index.js';

export interface ReserveBehaviour {
  /** Answer every reserve with this contract error. */
  error?: ErrorCode;
  /** Wait this long before answering (a slow origin). */
  delayMs?: number;
  /** Drop the connection without answering (a crashing origin). */
  hangUp?: boolean;
}

export interface ActivityBehaviour {
  snapshot?: ActivitySnapshot;
  reserve?: ReserveBehaviour;
}

export interface OriginCalls {
  total: number;
  reserve: number;
  activity: number;
  reservation: number;
  /** Pages of a lottery's entrant list. */
  entrants: number;
  traceparents: string[];
}

export interface StandInOrigin {
  url: string;
  port: number;
  setActivity(activityId: string, behaviour: ActivityBehaviour): void;
  calls(activityId: string): OriginCalls;
  badSignatures(): number;
  stop(): Promise<void>;
}

const emptyCalls = (): OriginCalls => ({
  total: 0,
  reserve: 0,
  activity: 0,
  reservation: 0,
  entrants: 0,
  traceparents: [],
});

export async function startStandInOrigin(opts: { secret: string; port?: number }): Promise<StandInOrigin> {
  const activities = new Map<string, ActivityBehaviour>();
  const calls = new Map<string, OriginCalls>();
  const holders = new Map<string, string>(); // `${activity}:${user}` → reservation id
  const owners = new Map<string, string>(); // reservation id → user id
  let badSignatures = 0;

  const count = (
    activityId: string,
    kind: 'reserve' | 'activity' | 'reservation' | 'entrants',
    req: IncomingMessage,
  ) => {
    let c = calls.get(activityId);
    if (!c) calls.set(activityId, (c = emptyCalls()));
    c.total++;
    c[kind]++;
    if (typeof req.headers.traceparent === 'string' && c.traceparents.length < 100)
      c.traceparents.push(req.headers.traceparent);
  };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const fail = (res: ServerResponse, code: ErrorCode, message: string = code) =>
    send(res, ERROR_STATUS[code], errorBody(code, message, 'stand-in'));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const path = url.pathname;
    const method = req.method ?? 'GET';

    let m: RegExpExecArray | null;
    if ((m = /^\/__control\/activities\/(\d+)$/.exec(path)) && method === 'PUT') {
      activities.set(m[1]!, JSON.parse(body) as ActivityBehaviour);
      return send(res, 200, { ok: true });
    }
    if ((m = /^\/__control\/calls\/(\d+)$/.exec(path))) return send(res, 200, calls.get(m[1]!) ?? emptyCalls());
    if (path === '/__control/bad-signatures') return send(res, 200, { badSignatures });

    const failure = await verifyEdgeRequest(opts.secret, {
      method,
      pathWithQuery: path + url.search,
      body,
      timestamp: req.headers['x-edge-timestamp'] as string | undefined,
      signature: req.headers['x-edge-signature'] as string | undefined,
    });
    if (failure) {
      badSignatures++;
      return fail(res, 'unauthenticated', `edge signature: ${failure}`);
    }

    if (path === '/internal/reserve' && method === 'POST') {
      const r = JSON.parse(body) as { activityId: string; userId: string; quantity: number; requestId: string };
      count(r.activityId, 'reserve', req);
      const behaviour = activities.get(r.activityId)?.reserve ?? {};
      if (behaviour.delayMs) await new Promise((done) => setTimeout(done, behaviour.delayMs));
      if (behaviour.hangUp) return void req.socket.destroy();
      const held = holders.get(`${r.activityId}:${r.userId}`);
      if (held) return send(res, 200, { status: 'queued', reservationId: held });
      if (behaviour.error) return fail(res, behaviour.error);
      const reservationId = newReservationId(r.activityId);
      holders.set(`${r.activityId}:${r.userId}`, reservationId);
      owners.set(reservationId, r.userId);
      return send(res, 202, { status: 'queued', reservationId });
    }
    if ((m = /^\/internal\/activities\/(\d+)$/.exec(path)) && method === 'GET') {
      count(m[1]!, 'activity', req);
      const snapshot = activities.get(m[1]!)?.snapshot;
      return snapshot ? send(res, 200, snapshot) : fail(res, 'not_found');
    }
    if ((m = /^\/internal\/activities\/(\d+)\/draw\/entrants$/.exec(path)) && method === 'GET') {
      // A made-up endless list: one line after the cursor, its ticket the cursor + 1, which is also the
      // `next` cursor, so every cursor is a distinct page and every page leads to another.
      count(m[1]!, 'entrants', req);
      const after = url.searchParams.get('after') ?? '';
      const ticket = (after === '' ? 1n : BigInt(`0x${after}`) + 1n).toString(16).padStart(64, '0');
      return send(res, 200, {
        activityId: m[1],
        entrants: [{ ticket, entrant: 'e'.repeat(64), entry: 1, quantity: 1, won: false, excluded: false }],
        next: ticket,
      });
    }
    if ((m = /^\/internal\/activities\/(\d+)\/reservation$/.exec(path)) && method === 'GET') {
      count(m[1]!, 'reservation', req);
      const held = holders.get(`${m[1]}:${url.searchParams.get('userId')}`);
      return held
        ? send(res, 200, { reservationId: held, status: 'queued' } satisfies ReservationBody)
        : fail(res, 'not_found');
    }
    if ((m = /^\/internal\/reservations\/([^/]+)$/.exec(path)) && method === 'GET') {
      const reservationId = m[1]!;
      count(activityOfReservation(reservationId) ?? '0', 'reservation', req);
      const owner = owners.get(reservationId);
      if (!owner) return fail(res, 'not_found');
      if (owner !== url.searchParams.get('userId')) return fail(res, 'forbidden', 'not your reservation');
      return send(res, 200, { reservationId, status: 'queued' } satisfies ReservationBody);
    }
    return fail(res, 'not_found');
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) fail(res, 'internal', String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    setActivity: (id, behaviour) => void activities.set(id, behaviour),
    calls: (id) => calls.get(id) ?? emptyCalls(),
    badSignatures: () => badSignatures,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
