/**
 * `npm run verify-draw -- --activity <id> [--edge <url>] [--user <id>] [--close <hex>]`: checks a
 * lottery's draw from public data only (docs/lottery.md, rule in origin/lottery/draw-rule.ts), as any
 * buyer could: the public activity (drawCommitment, drawEntrantsDigest, drawParameters,
 * drawCloseDigest, drawSeed, summary) and the published entrant list, both from the edge (EDGE_URL,
 * default http://127.0.0.1:8787).
 *  1. commitment: the commitment of drawSeed under the draw's scheme = drawCommitment (the seed and,
 *     from scheme 3 on, the scheme are the ones fixed before the sale);
 *  2. entrants: the list is as long as the summary says;
 *  3. digest: the lines in entry order (`entry` = 1 … N, each once) hash to drawEntrantsDigest, the
 *     digest published at the close, before the seed — so no entrant was added, dropped, substituted
 *     or had their quantity changed after the close;
 *  4. tickets: every line's ticket = HMAC(drawSeed, digest || entrant);
 *  5. close (scheme 3): drawParameters and the digest hash to drawCloseDigest (and to --close, the
 *     value a witness recorded at the close, when given); the summary's units are the close's; no
 *     line asks for more than the close's maxPerUser;
 *  6. order: the list is served in strictly ascending ticket order;
 *  7. winners: replaying the rule from the units (scheme 3: the close's; older: the summary's;
 *     excluded entrants take nothing) gives exactly the published `won` flags;
 *  8. summary: as many winners and exclusions as it says;
 *  with --user: that user's line (entrant = HMAC(drawSeed, userId)), place and outcome.
 * No downgrade: a draw of scheme 2 or more, or a list whose lines carry `entrant` / `entry`, needs the
 * digest and ticket checks (a missing digest fails them); scheme 3 needs the close record. Only a
 * scheme-1 draw whose lines are of scheme 1 gets the checks of its time: 1, 2, order, winners,
 * summary. Exit 0 when every check holds, 1 when one fails, 2 on bad usage or an unreachable edge.
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { isId } from '../contract/ids.js';
import {
  closeDigestOf,
  commitmentOf,
  entrantOf,
  entryLine,
  expectedOutcomes,
  ticketOf,
  type DrawParameters,
} from '../origin/lottery/draw-rule.js';
import type { EntrantRow } from '../origin/lottery/draw-store.js';

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

export interface VerifyOptions {
  /** The close record's digest as a witness recorded it at the close: the published one must equal it. */
  close?: string;
}

export async function verifyDraw(
  edgeUrl: string,
  activityId: string,
  userId?: string,
  opts: VerifyOptions = {},
): Promise<DrawVerification> {
  const activity = await getJson(`${edgeUrl}/api/activities/${activityId}`);
  const seed: string | undefined = activity.drawSeed;
  if (activity.admission !== 'lottery') throw new Error(`activity ${activityId} is not a lottery`);
  if (!seed || !activity.draw) throw new Error(`activity ${activityId} has not been drawn yet (no drawSeed)`);
  if (!activity.draw.entrantsPublished) throw new Error(`the entrant list of ${activityId} is not published yet`);

  const list: EntrantRow[] = [];
  for (let after = ''; ;) {
    const page = await getJson(`${edgeUrl}/api/activities/${activityId}/draw/entrants?after=${after}`);
    list.push(...page.entrants);
    if (!page.next) break;
    after = page.next;
  }

  const digest: string | undefined = activity.drawEntrantsDigest;
  const scheme: number = activity.draw.scheme ?? 1;
  const checks: DrawCheck[] = [];
  const check = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail });
  const commitment = commitmentOf(seed, scheme);
  check(
    'commitment',
    commitment === activity.drawCommitment,
    `commitment of drawSeed under scheme ${scheme} = ${commitment}, published ${activity.drawCommitment}`,
  );
  check(
    'entrants',
    list.length === activity.draw.entrants,
    `${list.length} listed, summary says ${activity.draw.entrants}`,
  );
  // Lines of scheme 2 or later carry the entrant id and the entry place: such a list is checked
  // against the digest whatever scheme the activity claims.
  const carriesEntrants = list.some((l) => l.entrant !== undefined || l.entry !== undefined);
  if (!digest && (scheme >= 2 || carriesEntrants)) {
    const why = carriesEntrants ? 'the lines carry entrant ids' : `the draw is of scheme ${scheme}`;
    check('digest', false, `no drawEntrantsDigest is published, but ${why}: the list cannot be checked`);
    check('tickets', false, 'no drawEntrantsDigest to derive the tickets from');
  }
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
  let units: number = activity.draw.units;
  if (scheme >= 3) {
    const parameters: DrawParameters | undefined = activity.drawParameters;
    const published: string | undefined = activity.drawCloseDigest;
    if (!parameters || !published || !digest) {
      check('close', false, 'no close record (drawParameters, drawCloseDigest, drawEntrantsDigest) is published');
    } else {
      const got = closeDigestOf(scheme, parameters, digest);
      const pinned = opts.close === undefined || opts.close === published;
      check(
        'close',
        got === published && pinned && parameters.units === activity.draw.units,
        `sha256 of the close record = ${got}, published ${published}` +
          (opts.close === undefined ? '' : `, recorded at the close ${opts.close}`) +
          `; units at the close ${parameters.units}, summary says ${activity.draw.units}`,
      );
      const tooMany = list.filter((l) => l.quantity < 1 || l.quantity > parameters.maxPerUser).length;
      check('quantities', tooMany === 0, `${tooMany} lines ask for more than maxPerUser ${parameters.maxPerUser}`);
      units = parameters.units;
    }
  } else if (opts.close !== undefined) {
    check('close', false, `--close given, but the draw is of scheme ${scheme}, which has no close record`);
  }
  let ordered = true;
  for (let i = 1; i < list.length; i++) if (!(list[i - 1]!.ticket < list[i]!.ticket)) ordered = false;
  check('order', ordered, 'tickets strictly ascending');
  const expected = expectedOutcomes(list, units);
  const differing = list.filter((e, i) => e.won !== expected[i]).length;
  check('winners', differing === 0, `${differing} entrants differ from the rule replayed on ${units} units`);
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
    options: {
      activity: { type: 'string' },
      edge: { type: 'string' },
      user: { type: 'string' },
      close: { type: 'string' },
    },
  });
  const edge = values.edge ?? process.env.EDGE_URL ?? 'http://127.0.0.1:8787';
  if (
    !isId(values.activity) ||
    (values.user !== undefined && !isId(values.user)) ||
    (values.close !== undefined && !/^[0-9a-f]{64}$/.test(values.close))
  ) {
    console.error('usage: npm run verify-draw -- --activity <id> [--edge <url>] [--user <id>] [--close <64 hex>]');
    process.exit(2);
  }
  let v: DrawVerification;
  try {
    v = await verifyDraw(edge.replace(/\/$/, ''), values.activity, values.user, { close: values.close });
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
