/**
 * Pass 3 of a lottery draw (origin/lottery/draw.ts runs it once the winners are final): the closed list
 * read once more in entry order, each entrant's ticket recomputed from the revealed seed, and the
 * public entrant list written to MySQL in batches.
 */
import type { Sale } from '../redis/redis-store.js';
import { parseEntry } from '../redis/redis-store.js';
import { forEachEntryPage, type ReadSettings } from './draw-entries.js';
import { DrawHmac, hexOf } from './draw-hmac.js';
import { insertEntrants, type DrawRecord, type EntrantRow } from './draw-store.js';
import type { DrawStores } from './draw-walk.js';

/**
 * Pass 3: the entrant list (entrant, entry, ticket, quantity, won, excluded) into MySQL in batches; a
 * batch written before a crash is skipped. Rows go in entry order: the table's key is the ticket and
 * the public list reads by it. The winners and exclusions are this run's, or Redis's record on a resume.
 */
export async function publishEntrants(
  deps: DrawStores,
  sale: Sale,
  record: DrawRecord,
  seed: string,
  known: { winners: Map<string, string>; excluded: Set<string> } | null,
  s: ReadSettings & { publishBatch: number },
  renew: () => Promise<void>,
): Promise<void> {
  const winners = known?.winners ?? (await deps.entries.winners(sale));
  const excluded = known?.excluded ?? (await deps.entries.excludedEntrants(sale));
  const hmac = new DrawHmac(seed);
  // A scheme-1 draw that an older version drew but did not publish: its tickets are the entrant ids.
  const ticketHmac = record.entrantsDigest ? new DrawHmac(seed, record.entrantsDigest) : null;
  const entrant = new Int32Array(8);
  const ticket = new Int32Array(8);
  let rows: EntrantRow[] = [];
  // One INSERT in flight while the next batch is hashed (MySQL, not this process, is the slower side).
  let inFlight: Promise<void> = Promise.resolve();
  const flush = async () => {
    if (rows.length === 0) return;
    const batch = rows;
    rows = [];
    await inFlight;
    await renew();
    inFlight = insertEntrants(deps.db, sale.activityId, batch);
    // Surfaces at the next flush or at the end, not as an unhandled rejection meanwhile.
    inFlight.catch(() => {});
  };
  await forEachEntryPage(deps.entries, sale, s, async (page, first) => {
    // Every row needs its user id as a string anyway (winners, exclusions): one string per line here.
    const lines = page === '' ? [] : page.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const e = parseEntry(lines[i]!);
      hmac.ofString(e.userId, entrant);
      if (!ticketHmac) {
        rows.push({ ticket: hexOf(entrant), quantity: e.quantity, won: winners.has(e.userId) });
      } else {
        ticketHmac.ofHex(entrant, 0, ticket);
        rows.push({
          entrant: hexOf(entrant),
          entry: first + i + 1,
          ticket: hexOf(ticket),
          quantity: e.quantity,
          won: winners.has(e.userId),
          excluded: excluded.has(e.userId),
        });
      }
      if (rows.length >= s.publishBatch) await flush();
    }
  });
  await flush();
  await inFlight;
}
