/**
 * `verify-draw` catches a draw that does not follow its rule: a seed that is not the committed one,
 * a list out of order, a winner the rule would not pick. Served by a plain HTTP server standing in
 * for the edge's two public routes (the honest path runs against the real stack in
 * test/e2e/lottery-edge.test.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { commitmentOf, drawOrder, expectedOutcomes } from '../../origin/lottery/draw-rule.js';
import { verifyDraw } from '../../scripts/verify-draw.js';

const seed = 'c'.repeat(64);
const users = Array.from({ length: 40 }, (_, i) => ({ userId: String(500 + i), quantity: (i % 2) + 1 }));
const ordered = drawOrder(seed, users);
const won = expectedOutcomes(ordered, 12);
const honest = {
  activity: {
    admission: 'lottery',
    drawCommitment: commitmentOf(seed),
    drawSeed: seed,
    draw: { entrants: 40, winners: won.filter(Boolean).length, units: 12, entrantsPublished: true },
  },
  entrants: ordered.map((e, i) => ({ ticket: e.ticket, quantity: e.quantity, won: won[i] })),
};
let served = honest;
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url!.includes('/draw/entrants'))
      res.end(JSON.stringify({ activityId: '1', entrants: served.entrants, next: null }));
    else res.end(JSON.stringify(served.activity));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const failing = async () => (await verifyDraw(url, '1')).checks.filter((c) => !c.ok).map((c) => c.name);

it('an honest draw passes every check', async () => {
  served = honest;
  expect(await failing()).toEqual([]);
});

it('a seed other than the committed one fails the commitment check', async () => {
  served = { ...honest, activity: { ...honest.activity, drawCommitment: commitmentOf('d'.repeat(64)) } };
  expect(await failing()).toEqual(['commitment']);
});

it('a loser swapped in for a winner fails the winners check', async () => {
  const entrants = honest.entrants.map((e) => ({ ...e }));
  const firstWinner = entrants.findIndex((e) => e.won);
  const lastLoser =
    entrants.length -
    1 -
    [...entrants].reverse().findIndex((e) => !e.won && e.quantity === entrants[firstWinner]!.quantity);
  entrants[firstWinner]!.won = false;
  entrants[lastLoser]!.won = true;
  served = { ...honest, entrants };
  expect(await failing()).toEqual(['winners']);
});

it('a list out of ticket order fails the order check', async () => {
  const entrants = honest.entrants.map((e) => ({ ...e }));
  [entrants[30], entrants[31]] = [entrants[31]!, entrants[30]!];
  served = { ...honest, entrants };
  expect(await failing()).toContain('order');
});
