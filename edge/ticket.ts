/**
 * Signed, time-limited purchase tickets (docs/design.md §3). A ticket is
 * `v1.<activityId>.<userId>.<expiresAtMs>.<kid>.<nonce>.<hex HMAC-SHA256(key[kid], everything before)>`:
 * URL-safe, parsed without JSON, checked with the contract's constant-time HMAC verify. `TICKET_KEYS`
 * holds several keys (`kid:secret,kid:secret`); the first signs, all verify, so rotating keys keeps
 * tickets in flight valid.
 */
import { ContractError, hmacHex, isId, randomHex, verifyHmacHex } from '../contract/index.js';
import { refusal } from './refusal.js';
import { TtlCache } from './ttl-cache.js';

export interface TicketKey {
  kid: string;
  secret: string;
}

const KID = /^[A-Za-z0-9_-]{1,16}$/;
const NONCE = /^[0-9a-f]{16}$/;
const MAX_TICKET_LENGTH = 256;

/**
 * Tickets whose signature this isolate refused, per key set (a deployment's keys never change
 * within an isolate): a client replaying a forged ticket costs a lookup, not an HMAC, and
 * gets the same answer. Only the signature refusal is kept — it depends on nothing but the ticket
 * and the keys. Bounded; an entry lives REFUSED_TICKET_TTL_MS (≤ 256-character keys: ≈ 5 MB at most).
 */
const REFUSED_TICKET_TTL_MS = 60_000;
const MAX_REFUSED_TICKETS = 10_000;
const refusedTickets = new WeakMap<TicketKey[], TtlCache<true>>();
const BAD_SIGNATURE = 'ticket signature is not valid';

export function parseTicketKeys(raw: string): TicketKey[] {
  const keys = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const i = part.indexOf(':');
      const kid = part.slice(0, i);
      const secret = part.slice(i + 1);
      if (i < 1 || !KID.test(kid) || secret.length < 16) {
        throw new Error('TICKET_KEYS must be "kid:secret,kid:secret" (kid [A-Za-z0-9_-]{1,16}, secret ≥ 16 chars)');
      }
      return { kid, secret };
    });
  if (keys.length === 0) throw new Error('TICKET_KEYS holds no key');
  return keys;
}

export async function issueTicket(
  keys: TicketKey[],
  t: { activityId: string; userId: string; expiresAt: number },
): Promise<string> {
  const key = keys[0]!;
  const payload = `v1.${t.activityId}.${t.userId}.${t.expiresAt}.${key.kid}.${randomHex(8)}`;
  return `${payload}.${await hmacHex(key.secret, payload)}`;
}

/** Throws 403 `bad_ticket` unless the ticket is genuine, unexpired, for this activity and this user. */
export async function verifyTicket(
  keys: TicketKey[],
  ticket: string | undefined,
  expect: { activityId: string; userId: string; now: number },
): Promise<void> {
  await checkTicket(keys, ticket, expect);
}

/**
 * `verifyTicket` for the purchase route: a ticket it can refuse without the HMAC (malformed, or a
 * forged one this isolate already refused) is refused synchronously — a replayed forged ticket
 * costs a lookup and a throw, no async call and no rejected-promise chain — and only a
 * ticket whose signature must be computed returns the promise of that check.
 */
export function checkTicket(
  keys: TicketKey[],
  ticket: string | undefined,
  expect: { activityId: string; userId: string; now: number },
): Promise<void> {
  if (!ticket || ticket.length > MAX_TICKET_LENGTH) throw badTicket('missing or malformed ticket');
  if (refusedTickets.get(keys)?.get(ticket, expect.now)) throw badTicket(BAD_SIGNATURE); // a replay: no HMAC
  const parts = ticket.split('.');
  const [version, activityId, userId, expiresAt, kid, nonce, signature] = parts;
  if (
    parts.length !== 7 ||
    version !== 'v1' ||
    !isId(activityId) ||
    !isId(userId) ||
    !/^\d{1,15}$/.test(expiresAt!) ||
    !NONCE.test(nonce!)
  ) {
    throw badTicket('missing or malformed ticket');
  }
  const payload = ticket.slice(0, ticket.length - signature!.length - 1);
  return verifySigned(
    keys,
    {
      ticket,
      payload,
      signature: signature!,
      kid: kid!,
      expiresAt: expiresAt!,
      activityId,
      userId,
    },
    expect,
  );
}

/** A well-formed ticket's fields, before its signature is checked. */
interface ParsedTicket {
  ticket: string;
  payload: string;
  signature: string;
  kid: string;
  expiresAt: string;
  activityId: string;
  userId: string;
}

async function verifySigned(
  keys: TicketKey[],
  t: ParsedTicket,
  expect: { activityId: string; userId: string; now: number },
): Promise<void> {
  const key = keys.find((k) => k.kid === t.kid);
  if (!key || !(await verifyHmacHex(key.secret, t.payload, t.signature))) {
    let refused = refusedTickets.get(keys); // another request may have made it meanwhile
    if (!refused) refusedTickets.set(keys, (refused = new TtlCache<true>(MAX_REFUSED_TICKETS)));
    refused.set(t.ticket, true, expect.now + REFUSED_TICKET_TTL_MS, expect.now);
    throw badTicket(BAD_SIGNATURE);
  }
  if (Number(t.expiresAt) <= expect.now) throw badTicket('ticket has expired');
  if (t.activityId !== expect.activityId) throw badTicket('ticket is for another activity');
  if (t.userId !== expect.userId) throw badTicket('ticket belongs to another user');
}

function badTicket(message: string): ContractError {
  return refusal('bad_ticket', message);
}
