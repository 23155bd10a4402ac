/**
 * The draw's public rule (docs/design.md §10, scheme 2), in one place for the origin's draw and
 * for `verify-draw`. Every hash is hex SHA-256 / HMAC-SHA256 over ASCII text:
 *  - seed = HMAC(key = DRAW_SECRET, message = "seckill-draw-seed:<activityId>:<nonce>"); the nonce is
 *    random per activity and stored in MySQL; the secret lives only in the origin's environment, so
 *    MySQL (or a backup of it) holds no seed until the reveal;
 *  - commitment = SHA-256("seckill-draw-commitment:<scheme>:<seed>") (scheme 3), published at
 *    creation: it binds the scheme as well as the seed, so a draw re-labelled with another scheme
 *    fails its commitment (schemes 1 and 2: SHA-256(seed));
 *  - an entrant's id = HMAC(key = seed, message = userId): the published list's line of that user;
 *  - the closed list = every entry in entry order (bucket 0's entries first, then bucket 1's …); its
 *    digest = SHA-256 of "<entrant>:<quantity>\n" per entry, in that order, published at the close,
 *    before the seed is revealed;
 *  - ticket = HMAC(key = seed, message = digest || entrant): the draw order is ascending ticket, so
 *    no one can know the order before the list is closed, not even who holds the seed;
 *  - the close record (scheme 3): the parameters that decide the outcome — the units drawn, the
 *    quantity rule (maxPerUser) and the eligibility rule in force at the close — published at the
 *    close beside the digest, and closeDigest = SHA-256 of closeText (below) over them and the
 *    digest; `verify-draw` replays the winners from these units, not from the summary;
 *  - walking the order from `units` on sale: an entrant excluded at the draw (denied, or not eligible
 *    under the rule in force at the close) is passed over and takes nothing; otherwise a winner needs
 *    `quantity` units left; one asking for more than is left loses and the next is tried; once no
 *    unit is left, everyone after loses.
 * Hand checks: `printf %s "seckill-draw-commitment:3:$SEED" | sha256sum`, `printf %s "$USER" | openssl dgst -sha256 -hmac "$SEED"`,
 * `printf %s "$DIGEST$ENTRANT" | openssl dgst -sha256 -hmac "$SEED"`.
 * Scheme 2: as 3 without the close record, and commitment = SHA-256(seed). Scheme 1: the seed was
 * stored in MySQL from creation and ticket = entrant id.
 */
import { createHash, createHmac } from 'node:crypto';

/** The rule this code draws by (seckill_draw.scheme). */
export const DRAW_SCHEME = 3;

export function seedOf(drawSecret: string, activityId: string, nonce: string): string {
  return createHmac('sha256', Buffer.from(drawSecret, 'utf8'))
    .update(`seckill-draw-seed:${activityId}:${nonce}`, 'utf8')
    .digest('hex');
}

/** The commitment to a seed under a scheme: scheme 3 binds the scheme, 1 and 2 hash the seed alone. */
export function commitmentOf(seed: string, scheme: number): string {
  const text = scheme >= 3 ? `seckill-draw-commitment:${scheme}:${seed}` : seed;
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** What decides the outcome besides the list, fixed and published at the close (scheme 3). */
export interface DrawParameters {
  /** Units on sale when entries closed: the units the draw hands out. */
  units: number;
  /** The quantity rule: no entry asks for more. */
  maxPerUser: number;
  /** The eligibility rule in force at the close (null: everyone); entrants it refuses are excluded. */
  eligibility: { claim: string; values: string[] } | null;
}

/**
 * The close record's text, one `name:value` line each, hashed into closeDigest:
 * `seckill-draw-close:<scheme>`, `units:<n>`, `maxPerUser:<n>`, `eligibility:<JSON {claim, values} or
 * null>`, `entrants:<digest>`, each ending in a newline.
 */
export function closeText(scheme: number, p: DrawParameters, entrantsDigest: string): string {
  const rule = p.eligibility ? JSON.stringify({ claim: p.eligibility.claim, values: p.eligibility.values }) : 'null';
  return (
    `seckill-draw-close:${scheme}\nunits:${p.units}\nmaxPerUser:${p.maxPerUser}\n` +
    `eligibility:${rule}\nentrants:${entrantsDigest}\n`
  );
}

export function closeDigestOf(scheme: number, p: DrawParameters, entrantsDigest: string): string {
  return createHash('sha256')
    .update(closeText(scheme, p, entrantsDigest), 'utf8')
    .digest('hex');
}

export function entrantOf(seed: string, userId: string): string {
  return createHmac('sha256', Buffer.from(seed, 'utf8')).update(userId, 'utf8').digest('hex');
}

/** One line of the digested list. */
export function entryLine(entrant: string, quantity: number): string {
  return `${entrant}:${quantity}\n`;
}

/** Digest of the closed list: lines in entry order. */
export function digestOf(lines: Iterable<{ entrant: string; quantity: number }>): string {
  const h = createHash('sha256');
  for (const l of lines) h.update(entryLine(l.entrant, l.quantity), 'utf8');
  return h.digest('hex');
}

export function ticketOf(seed: string, digest: string, entrant: string): string {
  return createHmac('sha256', Buffer.from(seed, 'utf8'))
    .update(digest + entrant, 'utf8')
    .digest('hex');
}

export interface Entrant {
  userId: string;
  quantity: number;
}

export interface OrderedEntrant extends Entrant {
  entrant: string;
  ticket: string;
  /** 1-based place in the closed list (entry order). */
  entry: number;
}

/** The draw order: ascending ticket (ties, which SHA-256 makes practically impossible, by entrant id). */
export function compareDrawOrder(a: { ticket: string; entrant: string }, b: { ticket: string; entrant: string }) {
  return a.ticket < b.ticket
    ? -1
    : a.ticket > b.ticket
      ? 1
      : a.entrant < b.entrant
        ? -1
        : a.entrant > b.entrant
          ? 1
          : 0;
}

/**
 * The closed list's digest and every entrant in draw order (a full sort): the plain statement of the
 * rule, which the tests replay. `entries` must be in entry order. The origin's draw takes the same
 * order in bounded memory (origin/lottery/draw-selection.ts).
 */
export function drawOrder(seed: string, entries: Entrant[]): { digest: string; ordered: OrderedEntrant[] } {
  const withIds = entries.map((e, i) => ({ ...e, entrant: entrantOf(seed, e.userId), entry: i + 1 }));
  const digest = digestOf(withIds);
  const ordered = withIds.map((e) => ({ ...e, ticket: ticketOf(seed, digest, e.entrant) }));
  return { digest, ordered: ordered.sort(compareDrawOrder) };
}

/** Entrants in draw order given the published digest (what a buyer can replay with the public data). */
export function orderByTickets(seed: string, digest: string, entrants: Entrant[]): (Entrant & { ticket: string })[] {
  return entrants
    .map((e) => ({ ...e, entrant: entrantOf(seed, e.userId), ticket: '' }))
    .map((e) => ({ ...e, ticket: ticketOf(seed, digest, e.entrant) }))
    .sort(compareDrawOrder);
}

/**
 * What the rule says for entrants already in draw order, starting from `units` on sale: won or not,
 * per entrant. An excluded entrant takes nothing. The origin's draw reaches the same outcome through
 * the real reservation script; `verify-draw` recomputes it from the published list.
 */
export function expectedOutcomes(ordered: { quantity: number; excluded?: boolean }[], units: number): boolean[] {
  let left = units;
  return ordered.map((e) => {
    if (e.excluded || left <= 0 || e.quantity > left) return false;
    left -= e.quantity;
    return true;
  });
}
