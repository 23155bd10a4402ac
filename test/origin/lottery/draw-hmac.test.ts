/**
 * The draw's midstate HMAC (origin/lottery/draw-hmac.ts) is HMAC-SHA256: the same bytes as
 * node:crypto for random keys (short, exactly one block, longer than a block), prefixes of whole
 * blocks, and messages across every padding boundary; and the bounded selection
 * (origin/lottery/draw-selection.ts) takes exactly the rule's order, pass after pass.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DrawHmac, hexOf } from '../../../origin/lottery/draw-hmac.js';
import { drawOrder, entrantOf, ticketOf } from '../../../origin/lottery/draw-rule.js';
import { compareWords, DrawSelection } from '../../../origin/lottery/draw-selection.js';

const reference = (key: string, message: string) =>
  createHmac('sha256', Buffer.from(key, 'utf8')).update(message, 'utf8').digest('hex');

describe('DrawHmac', () => {
  it('equals node:crypto HMAC-SHA256 for keys of 1-130 bytes and messages of 0-200 bytes, with and without a prefix', () => {
    const out = new Int32Array(8);
    for (let n = 0; n <= 200; n++) {
      const key = randomBytes(1 + (n % 130)).toString('latin1');
      const message = randomBytes(n).toString('hex').slice(0, n);
      const h = new DrawHmac(key);
      h.ofString(message, out);
      expect(hexOf(out)).toBe(reference(key, message));
      h.ofAsciiPrefix(`${message}:7`, message.length, out);
      expect(hexOf(out)).toBe(reference(key, message));
      h.ofAscii(`1:1\n${message}:7`, 4, 4 + message.length, out);
      expect(hexOf(out)).toBe(reference(key, message));
      const prefix = randomBytes(32 * (1 + (n % 3))).toString('hex');
      new DrawHmac(key, prefix).ofString(message, out);
      expect(hexOf(out)).toBe(reference(key, prefix + message));
    }
  });

  it("gives the rule's entrant ids and tickets", () => {
    const seed = randomBytes(32).toString('hex');
    const digest = randomBytes(32).toString('hex');
    const entrant = new Int32Array(8);
    const ticket = new Int32Array(8);
    for (const userId of ['1', '42', '18446744073709551615']) {
      new DrawHmac(seed).ofString(userId, entrant);
      expect(hexOf(entrant)).toBe(entrantOf(seed, userId));
      new DrawHmac(seed, digest).ofHex(entrant, 0, ticket);
      expect(hexOf(ticket)).toBe(ticketOf(seed, digest, entrantOf(seed, userId)));
    }
  });
});

describe('DrawSelection', () => {
  it('passes of k after the last one taken give the full sort, entrant for entrant, for k = 0, 1, 7, n and more', () => {
    const seed = 'f'.repeat(64);
    const entries = Array.from({ length: 300 }, (_, i) => ({ userId: String(900 + i * 13), quantity: 1 + (i % 3) }));
    const { digest, ordered } = drawOrder(seed, entries);
    const words = (hex: string) => {
      const w = new Int32Array(8);
      for (let i = 0; i < 8; i++) w[i] = Number.parseInt(hex.slice(8 * i, 8 * i + 8), 16) | 0;
      return w;
    };
    const lines = entries.map((e, i) => ({
      ...e,
      entry: i + 1,
      entrant: words(entrantOf(seed, e.userId)),
      ticket: words(ticketOf(seed, digest, entrantOf(seed, e.userId))),
    }));
    for (const k of [1, 7, 300, 1000]) {
      const taken: string[] = [];
      let after: Int32Array | null = null;
      for (;;) {
        const selection = new DrawSelection(k);
        for (const l of lines) {
          if (after && compareWords(l.ticket, 0, after, 0) <= 0) continue;
          if (selection.wouldKeep(l.ticket, 0, l.entrant, 0))
            selection.offer(l.ticket, 0, l.entrant, 0, l.userId, l.quantity, l.entry);
        }
        const pass = selection.sorted();
        taken.push(...pass.map((c) => `${c.userId}/${c.quantity}/${c.entry}/${c.ticket}`));
        if (pass.length < k) break;
        after = words(pass[pass.length - 1]!.ticket);
      }
      expect(taken).toEqual(ordered.map((e) => `${e.userId}/${e.quantity}/${e.entry}/${e.ticket}`));
    }
    expect(new DrawSelection(0).sorted()).toEqual([]);
  });

  it('sorts tickets that share their first word (or all of it) by the rest, then by entrant id', () => {
    const words = (...w: number[]) => Int32Array.from(w);
    // [ticket words, entrant first word]: first words equal across several, one full tie broken by the entrant.
    const cases: [number[], number][] = [
      [[5, 9, 0, 0, 0, 0, 0, 0], 1],
      [[5, 2, 0, 0, 0, 0, 0, 0], 1],
      [[-1, 0, 0, 0, 0, 0, 0, 0], 1],
      [[5, 2, 0, 0, 0, 0, 0, 1], 3],
      [[5, 2, 0, 0, 0, 0, 0, 1], 2],
      [[0, 7, 0, 0, 0, 0, 0, 0], 1],
      [[5, -3, 0, 0, 0, 0, 0, 0], 1],
    ];
    const selection = new DrawSelection(cases.length);
    cases.forEach(([t, e], i) => selection.offer(words(...t), 0, words(e, 0, 0, 0, 0, 0, 0, 0), 0, `u${i}`, 1, i + 1));
    // Unsigned order: 0 < 5 < 0xffffffff; within 5: 2, 2 (…1, entrants 2 then 3), 9, 0xfffffffd.
    expect(selection.sorted().map((c) => c.userId)).toEqual(['u5', 'u1', 'u4', 'u3', 'u0', 'u6', 'u2']);
  });
});
