/**
 * `verify-draw` catches a draw that does not follow its rule or a list changed after the close
 * (issue 24.3): a seed that is not the committed one, a list out of order, and each tampering with
 * the published list — a substituted entrant, a changed quantity, a dropped entrant, an added
 * entrant, a flipped `won` flag — even when the tamperer keeps tickets, order and outcomes consistent.
 * Served by a plain HTTP server standing in for the edge's two public routes (the honest path runs
 * against the real stack in test/e2e/lottery-edge.test.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  commitmentOf,
  compareDrawOrder,
  drawOrder,
  entrantOf,
  expectedOutcomes,
  ticketOf,
} from '../../origin/lottery/draw-rule.js';
import { verifyDraw } from '../../scripts/verify-draw.js';

interface Line {
  ticket: string;
  entrant: string;
  entry: number;
  quantity: number;
  won: boolean;
  excluded: boolean;
}

const seed = 'c'.repeat(64);
const UNITS = 12;
const entries = Array.from({ length: 40 }, (_, i) => ({ userId: String(500 + i), quantity: (i % 2) + 1 }));
const { digest, ordered } = drawOrder(seed, entries);
// Two entrants near the top are passed over (denied / not eligible at the close).
const excludedUsers = new Set([ordered[1]!.userId, ordered[4]!.userId]);

/** The published list for lines in any order: sorted by ticket, outcomes by the rule. */
function listOf(lines: Omit<Line, 'won'>[]): Line[] {
  const sorted = [...lines].sort(compareDrawOrder);
  const won = expectedOutcomes(sorted, UNITS);
  // Exclusions count only while units are left, as the draw records them.
  return sorted.map((l, i) => ({ ...l, won: won[i]! }));
}

const honestList = listOf(
  ordered.map((e) => ({
    ticket: e.ticket,
    entrant: e.entrant,
    entry: e.entry,
    quantity: e.quantity,
    excluded: excludedUsers.has(e.userId),
  })),
);
const honest = {
  activity: {
    admission: 'lottery',
    drawCommitment: commitmentOf(seed),
    drawEntrantsDigest: digest,
    drawSeed: seed,
    draw: {
      entrants: 40,
      excluded: 2,
      winners: honestList.filter((l) => l.won).length,
      units: UNITS,
      entrantsPublished: true,
    },
  },
  entrants: honestList,
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
const lines = () => honestList.map(({ won: _won, ...l }) => ({ ...l }));
const summaryFor = (list: Line[]) => ({
  ...honest.activity,
  draw: {
    ...honest.activity.draw,
    entrants: list.length,
    winners: list.filter((l) => l.won).length,
    excluded: list.filter((l) => l.excluded).length,
  },
});
/** Serves a tampered list with a summary that agrees with it: only the digest can tell. */
const serveTampered = (list: Line[]) => (served = { activity: summaryFor(list), entrants: list });

it('an honest draw passes every check, and a user finds their line', async () => {
  served = honest;
  expect(await failing()).toEqual([]);
  const winner = ordered.find((e) => !excludedUsers.has(e.userId))!;
  const v = await verifyDraw(url, '1', winner.userId);
  expect(v.user).toMatchObject({ entrant: entrantOf(seed, winner.userId), won: true, excluded: false });
  const passedOver = [...excludedUsers][0]!;
  expect((await verifyDraw(url, '1', passedOver)).user).toMatchObject({ won: false, excluded: true });
});

it('a seed other than the committed one fails the commitment check', async () => {
  served = { ...honest, activity: { ...honest.activity, drawCommitment: commitmentOf('d'.repeat(64)) } };
  expect(await failing()).toEqual(['commitment']);
});

it('a list out of ticket order fails the order check', async () => {
  const entrants = honest.entrants.map((e) => ({ ...e }));
  [entrants[30], entrants[31]] = [entrants[31]!, entrants[30]!];
  served = { ...honest, entrants };
  expect(await failing()).toContain('order');
});

describe('tampering with the published list after the close', () => {
  it('a substituted entrant (a non-entrant in an entrant line, ticket and outcomes made consistent) fails the digest', async () => {
    const l = lines();
    const victim = l.findIndex((x) => x.entry === 7);
    const intruder = entrantOf(seed, '99999');
    l[victim] = { ...l[victim]!, entrant: intruder, ticket: ticketOf(seed, digest, intruder) };
    serveTampered(listOf(l));
    expect(await failing()).toEqual(['digest']);
  });

  it('a changed quantity fails the digest', async () => {
    const l = lines();
    const last = l[l.length - 1]!;
    last.quantity = last.quantity === 1 ? 2 : 1;
    serveTampered(listOf(l));
    expect(await failing()).toEqual(['digest']);
  });

  it('a dropped entrant fails the digest', async () => {
    const l = lines().filter((x) => x.entry !== 40);
    serveTampered(listOf(l));
    expect(await failing()).toEqual(['digest']);
  });

  it('an added entrant fails the digest', async () => {
    const l = lines();
    const intruder = entrantOf(seed, '99999');
    l.push({ entrant: intruder, ticket: ticketOf(seed, digest, intruder), entry: 41, quantity: 1, excluded: false });
    serveTampered(listOf(l));
    expect(await failing()).toEqual(['digest']);
  });

  it('a flipped won flag fails the winners check', async () => {
    const list = honestList.map((x) => ({ ...x }));
    const loser = list.findIndex((x) => !x.won && !x.excluded);
    list[loser]!.won = true;
    serveTampered(list);
    expect(await failing()).toEqual(['winners']);
  });

  it('a ticket not derived from the digest fails the tickets check', async () => {
    const list = honestList.map((x) => ({ ...x }));
    list[0]!.ticket = '0'.repeat(64);
    serveTampered(list);
    expect(await failing()).toContain('tickets');
  });
});
