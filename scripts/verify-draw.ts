/**
 * `npm run verify-draw -- --activity <id> [--edge <url>] [--user <id>]`: checks a lottery's draw from
 * public data only (DESIGN §10), as any buyer could: the public activity (drawCommitment, drawSeed,
 * summary) and the published entrant list, both from the edge (EDGE_URL, default
 * http://127.0.0.1:8787).
 *  1. SHA-256(drawSeed) = drawCommitment (the seed is the one fixed before the sale);
 *  2. the list is in strictly ascending ticket order and as long as the summary says;
 *  3. replaying the rule (origin/lottery/draw-rule.ts) from the units on sale gives exactly the
 *     published winners, and as many as the summary says;
 *  4. with --user: that user's ticket HMAC-SHA256(drawSeed, userId), place and outcome.
 * Exit 0 when every check holds, 1 when one fails, 2 on bad usage or an unreachable edge.
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { isId } from '../contract/ids.js';
import { commitmentOf, expectedOutcomes, ticketOf } from '../origin/lottery/draw-rule.js';

export interface DrawCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface DrawVerification {
  ok: boolean;
  checks: DrawCheck[];
  /** With a user: their ticket, 1-based place in the draw order (null: not an entrant) and outcome. */
  user?: { userId: string; ticket: string; place: number | null; won: boolean };
}

interface Entrant {
  ticket: string;
  quantity: number;
  won: boolean;
}

async function getJson(url: string): Promise<any> {
  const res = await fetch(url);
  const body = await res.json().catch(() => null);
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

export async function verifyDraw(edgeUrl: string, activityId: string, userId?: string): Promise<DrawVerification> {
  const activity = await getJson(`${edgeUrl}/api/activities/${activityId}`);
  const seed: string | undefined = activity.drawSeed;
  if (activity.admission !== 'lottery') throw new Error(`activity ${activityId} is not a lottery`);
  if (!seed || !activity.draw) throw new Error(`activity ${activityId} has not been drawn yet (no drawSeed)`);
  if (!activity.draw.entrantsPublished) throw new Error(`the entrant list of ${activityId} is not published yet`);

  const list: Entrant[] = [];
  for (let after = ''; ;) {
    const page = await getJson(`${edgeUrl}/api/activities/${activityId}/draw/entrants?after=${after}`);
    list.push(...page.entrants);
    if (!page.next) break;
    after = page.next;
  }

  const checks: DrawCheck[] = [];
  const check = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail });
  check('commitment', commitmentOf(seed) === activity.drawCommitment, `sha256(drawSeed) = ${commitmentOf(seed)}`);
  check(
    'entrants',
    list.length === activity.draw.entrants,
    `${list.length} listed, summary says ${activity.draw.entrants}`,
  );
  let ordered = true;
  for (let i = 1; i < list.length; i++) if (!(list[i - 1]!.ticket < list[i]!.ticket)) ordered = false;
  check('order', ordered, 'tickets strictly ascending');
  const expected = expectedOutcomes(list, activity.draw.units);
  const differing = list.filter((e, i) => e.won !== expected[i]).length;
  check(
    'winners',
    differing === 0,
    `${differing} entrants differ from the rule replayed on ${activity.draw.units} units`,
  );
  const won = list.filter((e) => e.won);
  check(
    'summary',
    won.length === activity.draw.winners,
    `${won.length} won in the list, summary says ${activity.draw.winners}`,
  );

  const result: DrawVerification = { ok: checks.every((c) => c.ok), checks };
  if (userId) {
    const ticket = ticketOf(seed, userId);
    const index = list.findIndex((e) => e.ticket === ticket);
    result.user = { userId, ticket, place: index < 0 ? null : index + 1, won: index >= 0 && list[index]!.won };
  }
  return result;
}

async function main() {
  const { values } = parseArgs({
    options: { activity: { type: 'string' }, edge: { type: 'string' }, user: { type: 'string' } },
  });
  const edge = values.edge ?? process.env.EDGE_URL ?? 'http://127.0.0.1:8787';
  if (!isId(values.activity) || (values.user !== undefined && !isId(values.user))) {
    console.error('usage: npm run verify-draw -- --activity <id> [--edge <url>] [--user <id>]');
    process.exit(2);
  }
  let v: DrawVerification;
  try {
    v = await verifyDraw(edge.replace(/\/$/, ''), values.activity, values.user);
  } catch (err) {
    console.error(`verify-draw: ${(err as Error).message}`);
    process.exit(2);
  }
  for (const c of v.checks) console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
  if (v.user)
    console.log(
      v.user.place === null
        ? `user ${v.user.userId}: ticket ${v.user.ticket} is not in the list (did not enter)`
        : `user ${v.user.userId}: ticket ${v.user.ticket}, place ${v.user.place}, ${v.user.won ? 'won' : 'lost'}`,
    );
  console.log(v.ok ? 'draw verified' : 'draw NOT verified');
  process.exit(v.ok ? 0 : 1);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main();
