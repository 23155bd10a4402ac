/**
 * The draw's public rule (DESIGN §10), in one place for the origin's draw and for `verify-draw`:
 *  - commitment = hex SHA-256 of the seed, the seed taken as its 64 hex characters (ASCII);
 *  - an entrant's ticket = hex HMAC-SHA256(key = the seed's 64 hex characters, message = userId);
 *  - entrants are taken in ascending ticket order, each through the normal reservation: a winner
 *    needs `quantity` units left (and quantity ≤ maxPerUser, which entering already checked); one
 *    asking for more than is left loses and the next is tried; once no unit is left, everyone after loses.
 * Hand checks: `printf %s "$SEED" | sha256sum`, `printf %s "$USER" | openssl dgst -sha256 -hmac "$SEED"`.
 */
import { createHash, createHmac } from 'node:crypto';

export function commitmentOf(seed: string): string {
  return createHash('sha256').update(seed, 'utf8').digest('hex');
}

export function ticketOf(seed: string, userId: string): string {
  return createHmac('sha256', Buffer.from(seed, 'utf8')).update(userId, 'utf8').digest('hex');
}

export interface Entrant {
  userId: string;
  quantity: number;
}

export interface OrderedEntrant extends Entrant {
  ticket: string;
}

/** The draw order: ascending ticket (ties, which SHA-256 makes practically impossible, by user id). */
export function compareDrawOrder(a: OrderedEntrant, b: OrderedEntrant): number {
  return a.ticket < b.ticket ? -1 : a.ticket > b.ticket ? 1 : a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0;
}

/**
 * Every entrant in draw order (a full sort): the plain statement of the rule, which the tests replay. The
 * origin's draw takes the same order lazily, only as far as it needs (origin/lottery/draw-order.ts).
 */
export function drawOrder(seed: string, entrants: Iterable<Entrant>): OrderedEntrant[] {
  const ordered: OrderedEntrant[] = [];
  for (const e of entrants) ordered.push({ ...e, ticket: ticketOf(seed, e.userId) });
  return ordered.sort(compareDrawOrder);
}

/**
 * What the rule says for entrants already in draw order, starting from `units` on sale: won or not,
 * per entrant. The origin's draw reaches the same outcome through the real reservation script;
 * `verify-draw` recomputes it from the published list.
 */
export function expectedOutcomes(ordered: { quantity: number }[], units: number): boolean[] {
  let left = units;
  return ordered.map((e) => {
    if (left <= 0 || e.quantity > left) return false;
    left -= e.quantity;
    return true;
  });
}
