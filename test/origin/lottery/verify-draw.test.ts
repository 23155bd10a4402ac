/**
 * `verify-draw` catches a draw that does not follow its rule or a list changed after the close
 *: a seed that is not the committed one, a list out of order, and each tampering with
 * the published list — a substituted entrant, a changed quantity, a dropped entrant, an added
 * entrant, a flipped `won` flag — even when the tamperer keeps tickets, order and outcomes consistent.
 * Served by a plain HTTP server standing in for the edge's two public routes (the honest path runs
 * against the real stack in test/e2e/lottery-edge.test.ts). The last block draws on the real origin,
 * Redis and MariaDB and rewrites the draw in MySQL as an insider would: a downgrade to scheme 1 and
 * raised units are refused (the CLI exits 1).
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeDigestOf,
  commitmentOf,
  compareDrawOrder,
  drawOrder,
  entrantOf,
  expectedOutcomes,
  ticketOf,
} from '../../../origin/lottery/draw-rule.js';
import { verifyDraw } from '../../../scripts/verify-draw.js';
import { publicActivity } from '../../../contract/activity.js';
import { uniqueId } from '../../helpers/ids.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

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
    drawCommitment: commitmentOf(seed, 2),
    drawEntrantsDigest: digest,
    drawSeed: seed,
    draw: {
      entrants: 40,
      excluded: 2,
      winners: honestList.filter((l) => l.won).length,
      units: UNITS,
      scheme: 2,
      entrantsPublished: true,
    },
  },
  entrants: honestList,
};
let served: { activity: object; entrants: object[] } = honest;
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
  served = { ...honest, activity: { ...honest.activity, drawCommitment: commitmentOf('d'.repeat(64), 2) } };
  expect(await failing()).toEqual(['commitment']);
});

it('a list out of ticket order fails the order check', async () => {
  const entrants = honest.entrants.map((e) => ({ ...e }));
  [entrants[30], entrants[31]] = [entrants[31]!, entrants[30]!];
  served = { ...honest, entrants };
  expect(await failing()).toContain('order');
});

it('scheme 3: the close record is checked, and a close digest recorded at the close pins the published one', async () => {
  const parameters = { units: UNITS, maxPerUser: 2, eligibility: null };
  const closeDigest = closeDigestOf(3, parameters, digest);
  const scheme3 = {
    ...honest,
    activity: {
      ...honest.activity,
      drawCommitment: commitmentOf(seed, 3),
      drawParameters: parameters,
      drawCloseDigest: closeDigest,
      draw: { ...honest.activity.draw, scheme: 3 },
    },
  };
  served = scheme3;
  expect((await verifyDraw(url, '1')).checks.map((c) => [c.name, c.ok])).toEqual([
    ['commitment', true],
    ['entrants', true],
    ['digest', true],
    ['tickets', true],
    ['close', true],
    ['quantities', true],
    ['order', true],
    ['winners', true],
    ['summary', true],
  ]);
  expect(await failing()).toEqual([]);
  expect((await verifyDraw(url, '1', undefined, { close: closeDigest })).ok).toBe(true);
  const other = (await verifyDraw(url, '1', undefined, { close: 'f'.repeat(64) })).checks.filter((c) => !c.ok);
  expect(other.map((c) => c.name)).toEqual(['close']);
  // A quantity rule tighter than a line's quantity fails the quantities check.
  const tight = { ...parameters, maxPerUser: 1 };
  served = {
    ...scheme3,
    activity: { ...scheme3.activity, drawParameters: tight, drawCloseDigest: closeDigestOf(3, tight, digest) },
  };
  expect(await failing()).toEqual(['quantities']);
  // The same draw labelled scheme 2 fails its commitment, which binds scheme 3.
  served = { ...scheme3, activity: { ...scheme3.activity, draw: { ...scheme3.activity.draw, scheme: 2 } } };
  expect(await failing()).toEqual(['commitment']);
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

/**
 * A database insider rewriting a real draw after the reveal: the draw runs on the real origin, Redis
 * and MariaDB; the rows are changed in MySQL as an insider would; `verify-draw` (the CLI, exit code)
 * reads them through a stand-in for the edge's two public routes that serves what the origin serves.
 */
describe('an insider rewriting a real draw in MySQL', () => {
  let o: TestOrigin;
  let edge: Server;
  let edgeUrl: string;
  const sales: { activityId: string; skuId: string }[] = [];

  beforeAll(async () => {
    o = await startTestOrigin({ DRAW_POLL_MS: '50' });
    edge = createServer((req, res) => {
      void (async () => {
        const m = /^\/api\/activities\/(\d+)(\/draw\/entrants)?(\?.*)?$/.exec(req.url!);
        const answer = !m
          ? null
          : m[2]
            ? await o.internal('GET', `/internal/activities/${m[1]}/draw/entrants${m[3] ?? ''}`)
            : await o.internal('GET', `/internal/activities/${m[1]}`);
        const body = !answer ? { error: 'not_found' } : await answer.json();
        res.writeHead(answer?.status ?? 404, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer?.status === 200 && !m![2] ? publicActivity(body as any, Date.now()) : body));
      })();
    });
    await new Promise<void>((r) => edge.listen(0, '127.0.0.1', r));
    edgeUrl = `http://127.0.0.1:${(edge.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => edge.close(() => r()));
    for (const s of sales) {
      const keys = await o.redis.keys(`sk:{${s.activityId}:${s.skuId}}:*`);
      if (keys.length) await o.redis.del(...keys);
    }
    await o.stop();
  });

  /** A lottery of 2 units and 6 entrants (one unit each), drawn and published by the origin. */
  async function drawnLottery(): Promise<string> {
    const activityId = uniqueId();
    const skuId = uniqueId();
    sales.push({ activityId, skuId });
    const startsAt = Date.now();
    // Long enough for the six entries on a busy machine (after the close an entry is 503 busy).
    const windowMs = 3_000;
    const created = await o.admin('POST', '/admin/activities', {
      activityId,
      skuId,
      title: `verify ${activityId}`,
      stock: 2,
      startsAt: new Date(startsAt).toISOString(),
      endsAt: new Date(startsAt + 3_600_000).toISOString(),
      maxPerUser: 1,
      admission: 'lottery',
      lotteryWindowMs: windowMs,
    });
    expect(created.status).toBe(201);
    const warm = await o.admin('POST', `/admin/activities/${activityId}/warmup`);
    expect(warm.status, await warm.clone().text()).toBe(200);
    const entered = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        o.internal('POST', '/internal/reserve', {
          activityId,
          userId: String(8_100_000 + i),
          quantity: 1,
          requestId: `v-${activityId}-${i}`,
        }),
      ),
    );
    expect(entered.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 202]);
    await waitFor(
      async () => ((await (await o.admin('GET', `/admin/activities/${activityId}`)).json()) as any).draw,
      (d) => d?.entrantsPublished === true,
      30_000,
      100,
    );
    return activityId;
  }

  const cli = (activityId: string, ...more: string[]) =>
    promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'scripts/verify-draw.ts', '--activity', activityId, '--edge', edgeUrl, ...more],
      { encoding: 'utf8' },
    ).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
    );
  const failed = (stdout: string) => [...stdout.matchAll(/^FAIL (\w+):/gm)].map((m) => m[1]);
  const sql = (statement: string, params: unknown[]) => o.db.pool.query(statement, params);

  /** The winning line at place 1 of the published list now carries a user who never entered. */
  async function swapFirstWinner(activityId: string, seed: string): Promise<string> {
    const [[first]] = (await sql(
      'SELECT ticket FROM seckill_draw_entrant WHERE activity_id = ? ORDER BY ticket LIMIT 1',
      [activityId],
    )) as any;
    const impostor = entrantOf(seed, '99999999');
    await sql(
      'UPDATE seckill_draw_entrant SET entrant = ?, won = 1, excluded = 0 WHERE activity_id = ? AND ticket = ?',
      [impostor, activityId, first.ticket],
    );
    return impostor;
  }
  const seedOfDraw = async (activityId: string) =>
    ((await (await o.admin('GET', `/admin/activities/${activityId}`)).json()) as any).draw.seed as string;

  it('the honest draw verifies (exit 0)', async () => {
    const activityId = await drawnLottery();
    const v = await cli(activityId);
    expect(failed(v.stdout)).toEqual([]);
    expect(v.stdout).toContain('draw verified');
    expect(v.code).toBe(0);
  });

  it('a non-entrant swapped in at place 1 with the digest left in place fails the digest and tickets (exit 1)', async () => {
    const activityId = await drawnLottery();
    await swapFirstWinner(activityId, await seedOfDraw(activityId));
    const v = await cli(activityId);
    // The line kept its ticket, which is not the impostor's: the tickets check fails beside the digest.
    expect(failed(v.stdout)).toEqual(['digest', 'tickets']);
    expect(v.code).toBe(1);
  });

  it('the same swap with the digest removed and the scheme set to 1 is refused, not downgraded (exit 1)', async () => {
    const activityId = await drawnLottery();
    await swapFirstWinner(activityId, await seedOfDraw(activityId));
    await sql('UPDATE seckill_draw SET entrants_digest = NULL, scheme = 1 WHERE activity_id = ?', [activityId]);
    const v = await cli(activityId, '--user', '99999999');
    expect(v.stdout).toContain('user 99999999: entrant');
    expect(v.stdout).toContain('draw NOT verified');
    // The commitment binds the scheme, and lines carrying entrants need the digest (and its tickets).
    expect(failed(v.stdout)).toEqual(['commitment', 'digest', 'tickets']);
    expect(v.code).toBe(1);
  });

  it('a downgrade that also strips the lines to the scheme-1 shape fails the commitment (exit 1)', async () => {
    const activityId = await drawnLottery();
    const seed = await seedOfDraw(activityId);
    await swapFirstWinner(activityId, seed);
    // Scheme-1 lines: no entrant, no entry; the ticket is the entrant id, so the impostor's line sorts
    // where their id puts it and the outcomes are redone by the rule.
    const [lines] = (await sql('SELECT ticket, entrant FROM seckill_draw_entrant WHERE activity_id = ?', [
      activityId,
    ])) as any;
    await sql('DELETE FROM seckill_draw_entrant WHERE activity_id = ?', [activityId]);
    const ids = (lines as { entrant: string }[]).map((l) => l.entrant).sort();
    for (const [i, entrant] of ids.entries())
      await sql(
        'INSERT INTO seckill_draw_entrant (activity_id, ticket, quantity, won, entrant, entry, excluded) VALUES (?, ?, 1, ?, NULL, NULL, 0)',
        [activityId, entrant, i < 2 ? 1 : 0],
      );
    await sql(
      'UPDATE seckill_draw SET entrants_digest = NULL, close_parameters = NULL, close_digest = NULL, scheme = 1 WHERE activity_id = ?',
      [activityId],
    );
    const v = await cli(activityId);
    expect(failed(v.stdout)).toEqual(['commitment']);
    expect(v.code).toBe(1);
  });

  it('one more unit, winner and unit won, and the next loser flipped to won, fails the winners check (exit 1)', async () => {
    const activityId = await drawnLottery();
    await sql(
      'UPDATE seckill_draw SET units = units + 1, winners = winners + 1, units_won = units_won + 1 WHERE activity_id = ?',
      [activityId],
    );
    const [[loser]] = (await sql(
      'SELECT ticket FROM seckill_draw_entrant WHERE activity_id = ? AND won = 0 AND excluded = 0 ORDER BY ticket LIMIT 1',
      [activityId],
    )) as any;
    await sql('UPDATE seckill_draw_entrant SET won = 1 WHERE activity_id = ? AND ticket = ?', [
      activityId,
      loser.ticket,
    ]);
    const [[row]] = (await sql('SELECT units, winners FROM seckill_draw WHERE activity_id = ?', [activityId])) as any;
    expect(row).toMatchObject({ units: 3, winners: 3 });
    const v = await cli(activityId);
    expect(v.stdout).toContain('draw NOT verified');
    // Replayed on the 2 units fixed at the close, the third winner is one too many.
    expect(failed(v.stdout)).toEqual(['close', 'winners']);
    expect(v.stdout).toContain('FAIL winners: 1 entrants differ from the rule replayed on 2 units');
    expect(v.code).toBe(1);
  });

  it('the same with the units raised in the close record too fails the close digest (exit 1)', async () => {
    const activityId = await drawnLottery();
    await sql(
      `UPDATE seckill_draw SET units = units + 1, winners = winners + 1, units_won = units_won + 1,
          close_parameters = JSON_SET(close_parameters, '$.units', 3) WHERE activity_id = ?`,
      [activityId],
    );
    const [[loser]] = (await sql(
      'SELECT ticket FROM seckill_draw_entrant WHERE activity_id = ? AND won = 0 AND excluded = 0 ORDER BY ticket LIMIT 1',
      [activityId],
    )) as any;
    await sql('UPDATE seckill_draw_entrant SET won = 1 WHERE activity_id = ? AND ticket = ?', [
      activityId,
      loser.ticket,
    ]);
    const v = await cli(activityId);
    expect(v.stdout).toContain('units at the close 3, summary says 3');
    expect(failed(v.stdout)).toEqual(['close']);
    expect(v.code).toBe(1);
  });
});
