/**
 * `npm run verify-draw -- --activity <id> [--edge <url>] [--user <id>]`: checks a lottery's draw from
 * public data only (docs/design.md §10, rule in origin/lottery/draw-rule.ts), as any buyer could: the public
 * activity (drawCommitment, drawEntrantsDigest, drawSeed, summary) and the published entrant list,
 * both from the edge (EDGE_URL, default http://127.0.0.1:8787).
 *  1. commitment: SHA-256(drawSeed) = drawCommitment (the seed is the one fixed before the sale);
 *  2. entrants: the list is as long as the summary says;
 *  3. digest: the lines in entry order (`entry` = 1 … N, each once) hash to drawEntrantsDigest, the
 *     digest published at the close, before the seed — so no entrant was added, dropped, substituted
 *     or had their quantity changed after the close;
 *  4. tickets: every line's ticket = HMAC(drawSeed, digest || entrant);
 *  5. order: the list is served in strictly ascending ticket order;
 *  6. winners: replaying the rule from the units on sale (excluded entrants take nothing) gives
 *     exactly the published `won` flags; 7. summary: as many winners and exclusions as it says;
 *  with --user: that user's line (entrant = HMAC(drawSeed, userId)), place and outcome.
 * A draw from before the digest (scheme 1, no drawEntrantsDigest) gets the checks of its time: 1, 2,
 * order, winners, summary. Exit 0 when every check holds, 1 when one fails, 2 on bad usage or an
 * unreachable edge.
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { isId } from '../contract/ids.js';
import { commitmentOf, entrantOf, entryLine, expectedOutcomes, ticketOf } from '../origin/lottery/draw-rule.js';

export interface DrawCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface DrawVerification {
  ok: boolean;
  checks: DrawCheck[];
  /** With a user: their entrant id, 1-based place in the draw order (null: not an entrant) and outcome. */
  user?: { userId: string; entrant: string; place: number | null; won: boolean; excluded: boolean };
}

interface Line {
  ticket: string;
  quantity: number;
  won: boolean;
  entrant?: string;
  entry?: number;
  excluded?: boolean;
}

/** Rate-limited pages (429) are asked again after Retry-After, this many times at most. */
const MAX_RETRIES = 20;

async function getJson(url: string): Promise<any> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url);
    const body = await res.json().catch(() => null);
    if (res.status === 429 && attempt < MAX_RETRIES) {
      const wait = Number(res.headers.get('retry-after') ?? '1');
      await new Promise((r) => setTimeout(r, Math.max(1, wait) * 1000));
      continue;
    }
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  }
}

export async function verifyDraw(edgeUrl: string, activityId: string, userId?: string): Promise<DrawVerification> {
  const activity = await getJson(`${edgeUrl}/api/activities/${activityId}`);
  const seed: string | undefined = activity.drawSeed;
  if (activity.admission !== 'lottery') throw new Error(`activity ${activityId} is not a lottery`);
  if (!seed || !activity.draw) throw new Error(`activity ${activityId} has not been drawn yet (no drawSeed)`);
  if (!activity.draw.entrantsPublished) throw new Error(`the entrant list of ${activityId} is not published yet`);

  const list: Line[] = [];
  for (let after = ''; ;) {
    const page = await getJson(`${edgeUrl}/api/activities/${activityId}/draw/entrants?after=${after}`);
    list.push(...page.entrants);
    if (!page.next) break;
    after = page.next;
  }

  const digest: string | undefined = activity.drawEntrantsDigest;
  const checks: DrawCheck[] = [];
  const check = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail });
  check('commitment', commitmentOf(seed) === activity.drawCommitment, `sha256(drawSeed) = ${commitmentOf(seed)}`);
  check(
    'entrants',
    list.length === activity.draw.entrants,
    `${list.length} listed, summary says ${activity.draw.entrants}`,
  );
  if (digest) {
    const byEntry = [...list].sort((a, b) => (a.entry ?? 0) - (b.entry ?? 0));
    const places = byEntry.every((l, i) => l.entry === i + 1 && typeof l.entrant === 'string');
    const h = createHash('sha256');
    for (const l of byEntry) h.update(entryLine(l.entrant ?? '', l.quantity), 'utf8');
    const got = h.digest('hex');
    check(
      'digest',
      places && got === digest,
      places ? `sha256 of the list in entry order = ${got}, published ${digest}` : 'entry places are not 1 … N',
    );
    const wrong = list.filter((l) => l.ticket !== ticketOf(seed, digest, l.entrant ?? '')).length;
    check('tickets', wrong === 0, `${wrong} tickets differ from HMAC(drawSeed, digest || entrant)`);
  }
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
  const won = list.filter((e) => e.won).length;
  const excluded = list.filter((e) => e.excluded).length;
  check(
    'summary',
    won === activity.draw.winners && excluded === (activity.draw.excluded ?? 0),
    `${won} won and ${excluded} excluded in the list, summary says ${activity.draw.winners} and ${activity.draw.excluded ?? 0}`,
  );

  const result: DrawVerification = { ok: checks.every((c) => c.ok), checks };
  if (userId) {
    const entrant = entrantOf(seed, userId);
    // Scheme 1 lines carry the entrant id as their ticket.
    const index = list.findIndex((e) => (e.entrant ?? e.ticket) === entrant);
    const line = list[index];
    result.user = {
      userId,
      entrant,
      place: index < 0 ? null : index + 1,
      won: line?.won ?? false,
      excluded: line?.excluded ?? false,
    };
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
        ? `user ${v.user.userId}: entrant ${v.user.entrant} is not in the list (did not enter)`
        : `user ${v.user.userId}: entrant ${v.user.entrant}, place ${v.user.place}, ` +
            (v.user.excluded ? 'excluded (denied or not eligible)' : v.user.won ? 'won' : 'lost'),
    );
  console.log(v.ok ? 'draw verified' : 'draw NOT verified');
  process.exit(v.ok ? 0 : 1);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main();
