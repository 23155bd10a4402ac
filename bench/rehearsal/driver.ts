/**
 * Drives the crowd through the edge: users arrive on the curve (lazily, in time order), each runs
 * its kind's script (ticket → purchase → repeat / poll / pay, or a bot's burst, or a bad ticket),
 * with at most `concurrency` requests in flight. Follow-ups (Retry-After, polls, repeats) wait in a
 * time-ordered agenda without holding a slot; a user's token and ticket live only while the user
 * still has something to do. Follow-ups go first but hold at most half the slots while newcomers
 * wait, so neither starves the other. With `slice`, this driver takes every `count`-th user from `index`
 * (the crowd spread over worker processes).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Agenda } from './agenda.js';
import type { HttpClient } from './client.js';
import { Population, type Arrival, type UserKind } from './population.js';
import type { Recorder, Step } from './recorder.js';

export interface DriveOptions {
  activityId: string;
  /** Epoch ms of the sale's start. */
  startsAt: number;
  population: Population;
  concurrency: number;
  pollRatio: number;
  payRatio: number;
  /** Follow-ups are not scheduled later than this after the last arrival (each kind's are bounded in number anyway). */
  tailMs: number;
  paymentSecret: string;
  /** This driver's share of the crowd: users i with i % count === index (default: all). */
  slice?: { index: number; count: number };
}

/** Purchases a bot fires back to back after its ticket. */
const BOT_BURST = 12;
/** Times a user follows Retry-After (429, 503 busy, 425) before giving up. */
const MAX_FOLLOWS = 3;
const POLL_EVERY_MS = 1000;
const MAX_POLLS = 30;
/** Share of repeats that use a new Idempotency-Key instead of the first one. */
const NEW_KEY_SHARE = 0.2;
/** Share of the in-flight slots follow-ups may hold while a newcomer is due (the rest are newcomers'). */
const FOLLOW_UP_SHARE = 0.5;
/** Genuine tickets kept for sharers to misuse. */
const SHARED_RING = 64;

interface User {
  id: string;
  kind: UserKind;
  luck: number;
  token: string;
  keys: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const jitter = (ms: number) => ms + Math.random() * 250;

export class Driver {
  private readonly agenda = new Agenda();
  private cursor = 0;
  private arrivalsDoneAt: number | null = null;
  private busy = 0;
  private busyFollowUps = 0;
  private readonly shared: string[] = [];
  private stopped = false;
  /** How late punctual users started compared with the curve (the generator's own lag). */
  maxArrivalLagMs = 0;

  constructor(
    private readonly o: DriveOptions,
    private readonly edge: HttpClient,
    private readonly origin: HttpClient,
    private readonly rec: Recorder,
    private readonly mint: (userId: string) => string,
  ) {
    this.cursor = o.slice?.index ?? 0;
    this.step = o.slice?.count ?? 1;
  }

  private readonly step: number;

  /** No new request after this; those in flight finish, and `run` resolves once they have. */
  stop(): void {
    this.stopped = true;
  }

  async run(): Promise<void> {
    const { population } = this.o;
    // Early users are scattered over the indices; queue them up front (indices only, ~3% of the crowd).
    for (let i = this.cursor; i < population.opts.users; i += this.step) {
      if (population.kindOf(i) === 'early') {
        const a = population.arrival(i);
        this.agenda.push(this.o.startsAt + a.at, () => this.arrive(a));
      }
    }
    await Promise.all(Array.from({ length: this.o.concurrency }, () => this.worker()));
  }

  private nextArrival(): Arrival | null {
    const { population } = this.o;
    while (this.cursor < population.opts.users && population.kindOf(this.cursor) === 'early') this.cursor += this.step;
    if (this.cursor < population.opts.users) return population.arrival(this.cursor);
    this.arrivalsDoneAt ??= Date.now();
    return null;
  }

  private async worker(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const now = Date.now();
      const top = this.agenda.peek();
      const arrival = this.nextArrival();
      const arrivalDue = arrival ? this.o.startsAt + arrival.at : Infinity;
      let run: (() => Promise<void>) | null = null;
      // Follow-ups (retry after Retry-After, poll, repeat) first, so they run on time (a late retry meets
      // an expired ticket), but never in more than FOLLOW_UP_SHARE of the slots while a newcomer waits:
      // with strict priority a 200k run made no reservation for 2.5 s while every slot polled.
      const followUpDue = top !== undefined && top.due <= now;
      const newcomerDue = arrival !== null && arrivalDue <= now;
      const followUpsFull = this.busyFollowUps >= Math.ceil(this.o.concurrency * FOLLOW_UP_SHARE);
      let followUp = false;
      if (followUpDue && (!newcomerDue || !followUpsFull)) {
        run = this.agenda.pop()!.run;
        followUp = true;
      } else if (arrival && newcomerDue) {
        this.cursor += this.step;
        const lag = now - arrivalDue;
        if (lag > this.maxArrivalLagMs) this.maxArrivalLagMs = lag;
        run = () => this.arrive(arrival);
      }
      if (run) {
        this.busy++;
        if (followUp) this.busyFollowUps++;
        try {
          await run();
        } finally {
          this.busy--;
          if (followUp) this.busyFollowUps--;
        }
        continue;
      }
      if (!top && !arrival && this.busy === 0) return;
      await sleep(Math.max(1, Math.min(20, Math.min(top?.due ?? Infinity, arrivalDue) - now)));
    }
  }

  private later(delayMs: number, run: () => Promise<void>): boolean {
    const due = Date.now() + delayMs;
    if (this.arrivalsDoneAt !== null && due > this.arrivalsDoneAt + this.o.tailMs) return false;
    this.agenda.push(due, run);
    return true;
  }

  private async call(
    step: Step,
    method: string,
    path: string,
    user: User | null,
    headers: Record<string, string> = {},
    body?: string,
  ) {
    const answer = await (step === 'payment' ? this.origin : this.edge).request(
      method,
      path,
      user ? { authorization: `Bearer ${user.token}`, ...headers } : headers,
      body,
    );
    this.rec.record(step, answer.status, answer.code, answer.ms);
    return answer;
  }

  private async arrive(a: Arrival): Promise<void> {
    this.rec.usersArrived++;
    const user: User = { id: a.userId, kind: a.kind, luck: a.luck, token: this.mint(a.userId), keys: 0 };
    if (a.kind === 'forger') return void (await this.purchase(user, this.forgedTicketUrl(user), this.newKey(user)));
    if (a.kind === 'sharer') {
      const url = this.shared[Math.floor(a.luck * this.shared.length)] ?? this.forgedTicketUrl(user);
      return void (await this.purchase(user, url, this.newKey(user)));
    }
    await this.ticket(user, 0);
  }

  private async ticket(user: User, follows: number): Promise<void> {
    const r = await this.call('ticket', 'POST', `/api/activities/${this.o.activityId}/tickets`, user);
    if (r.status === 200) {
      this.rec.usersWithTicket++;
      const url = r.body.purchaseUrl as string;
      if (this.shared.length < SHARED_RING) this.shared.push(url);
      else this.shared[Math.floor(Math.random() * SHARED_RING)] = url;
      return this.afterTicket(user, url);
    }
    if ((r.status === 425 || r.code === 'busy' || r.code === 'paused') && follows < MAX_FOLLOWS)
      this.later(jitter(Math.max(r.retryAfterMs, 500)), () => this.ticket(user, follows + 1));
  }

  private async afterTicket(user: User, url: string): Promise<void> {
    if (user.kind === 'bot') {
      let unsure = false;
      for (let i = 0; i < BOT_BURST; i++) {
        const r = await this.purchase(user, url, this.newKey(user));
        unsure ||= r.code === 'unavailable' || r.status === 0;
      }
      // A bot whose click was answered 503 unavailable may hold a reservation it never saw: it asks too.
      if (unsure && !this.rec.holders.has(user.id)) await this.lookup(user, 0);
      return;
    }
    await this.purchaseFlow(user, url, this.newKey(user), 0);
  }

  private async purchaseFlow(user: User, url: string, key: string, follows: number, unsure = false): Promise<void> {
    const r = await this.purchase(user, url, key);
    // 503 unavailable or a lost connection does not say whether the reservation was made.
    const ambiguous = unsure || r.code === 'unavailable' || r.status === 0;
    if ((r.status === 429 || r.code === 'busy' || r.code === 'unavailable') && follows < MAX_FOLLOWS) {
      this.later(jitter(Math.max(r.retryAfterMs, 1000)), () =>
        this.purchaseFlow(user, url, key, follows + 1, ambiguous),
      );
      return;
    }
    if (ambiguous && r.status >= 400 && !this.rec.holders.has(user.id)) {
      // As the sale page does: after an answer that proved nothing, ask for the caller's own reservation.
      await this.lookup(user, 0);
    }
    if (user.kind === 'retrier' && follows === 0) {
      // Did the answer arrive? The impatient user clicks again anyway, mostly with the same key.
      const repeatKey = (user.luck * 7) % 1 < NEW_KEY_SHARE ? this.newKey(user) : key;
      this.later(jitter(Math.max(r.retryAfterMs, 1100)), () => this.repeat(user, url, repeatKey));
    }
  }

  /** The caller's own reservation; a lookup that itself failed (503, lost) is asked again, as the page does. */
  private async lookup(user: User, follows: number): Promise<void> {
    const found = await this.call('lookup', 'GET', `/api/activities/${this.o.activityId}/reservation`, user);
    if (found.status === 200) this.rec.reserved(user.id, found.body.reservationId, 202, 'lookup');
    else if ((found.status === 0 || found.status >= 500) && follows < MAX_FOLLOWS)
      this.later(jitter(Math.max(found.retryAfterMs, 1000)), () => this.lookup(user, follows + 1));
  }

  /** A holder's repeat must come back with the same reservation; a refused one looks it up instead. */
  private async repeat(user: User, url: string, key: string): Promise<void> {
    const sentAt = Date.now();
    const r = await this.purchase(user, url, key);
    const held = this.rec.holders.get(user.id);
    if (held && r.status >= 400 && r.status !== 429) {
      // A repeat the generator sent after its ticket's expiry (it ran late) is refused as it should be.
      const why = r.code === 'bad_ticket' && ticketExpiredBy(url, sentAt) ? 'bad_ticket (ticket expired)' : r.code;
      this.rec.holderRepeatsRefused.set(why, (this.rec.holderRepeatsRefused.get(why) ?? 0) + 1);
      const found = await this.call('lookup', 'GET', `/api/activities/${this.o.activityId}/reservation`, user);
      if (found.status === 200 && found.body.reservationId !== held)
        this.rec.breaches.push(`user ${user.id}'s lookup found ${found.body.reservationId}, not the held ${held}`);
      if (found.status === 404) this.rec.breaches.push(`user ${user.id} holds ${held} but the lookup says not_found`);
    }
  }

  private async purchase(user: User, url: string, key: string) {
    const r = await this.call(
      'purchase',
      'POST',
      url,
      user,
      { 'idempotency-key': key, 'content-type': 'application/json' },
      '{"quantity":1}',
    );
    if (r.body?.status === 'waiting') {
      // `--overflow queue`: a place in line instead of a reservation (a repeat click: the same place).
      if (this.rec.waitingRoom.entered(user.id)) this.pollLineLater(user, r.body);
      return r;
    }
    if (r.body?.status === 'entered') {
      // Lottery (docs/design.md §10): an entry, not a reservation; the draw's winners are registered after it.
      if (r.status === 202) this.rec.entered++;
      if (r.status === 202 && user.luck < this.o.pollRatio) {
        const pollUrl = r.body.pollUrl as string;
        this.later(POLL_EVERY_MS, () => this.poll(user, pollUrl, 1));
      }
    } else if (r.status === 202 || r.status === 200) {
      this.rec.reserved(user.id, r.body.reservationId, r.status);
      if (r.status === 202 && user.luck < this.o.pollRatio) {
        const pollUrl = r.body.pollUrl as string;
        this.later(POLL_EVERY_MS, () => this.poll(user, pollUrl, 1));
      }
    }
    return r;
  }

  private async poll(user: User, pollUrl: string, n: number): Promise<void> {
    const r = await this.call('poll', 'GET', pollUrl, user);
    if (r.status === 429 && n < MAX_POLLS) {
      this.later(jitter(Math.max(r.retryAfterMs, POLL_EVERY_MS)), () => this.poll(user, pollUrl, n + 1));
    } else if (r.status === 200 && (r.body.status === 'queued' || r.body.status === 'drawing') && n < MAX_POLLS) {
      this.later(POLL_EVERY_MS, () => this.poll(user, pollUrl, n + 1));
    } else if (r.status === 200 && r.body.status === 'ordered' && user.luck / this.o.pollRatio < this.o.payRatio) {
      await this.pay(r.body.orderNo as string, user);
    }
  }

  /** Polls a place in line as told (pollAfterMs) until it turns into a result; gives up after the tail. */
  private pollLineLater(
    user: User,
    waiting: { pollUrl: string; pollAfterMs: number },
    delayMs = waiting.pollAfterMs,
  ): void {
    if (!this.later(delayMs, () => this.pollLine(user, waiting.pollUrl))) this.rec.waitingRoom.left(user.id, 'gave_up');
  }

  private async pollLine(user: User, pollUrl: string): Promise<void> {
    const r = await this.call('wait', 'GET', pollUrl, user);
    if (r.body?.status === 'waiting') return this.pollLineLater(user, r.body);
    if (r.status === 429 || r.status === 0 || r.code === 'unavailable') {
      return this.pollLineLater(user, { pollUrl, pollAfterMs: Math.max(r.retryAfterMs, 1000) });
    }
    if (r.status === 404) return this.rec.waitingRoom.left(user.id, 'dropped');
    this.rec.waitingRoom.left(user.id, r.body?.reservationId ? 'queued' : r.code);
    if (r.body?.reservationId) {
      // The kept purchase ran: a new reservation, followed like one answered 202 at once.
      this.rec.reserved(user.id, r.body.reservationId, 202);
      if (user.luck < this.o.pollRatio) this.later(POLL_EVERY_MS, () => this.poll(user, r.body.pollUrl as string, 1));
    }
  }

  /** The payment provider's webhook to the origin (docs/design.md §9), as the provider signs it. */
  private async pay(orderNo: string, user: User): Promise<void> {
    const { headers, body } = paymentCallback(this.o.paymentSecret, orderNo, `pay-${user.id}`);
    await this.call('payment', 'POST', PAYMENT_CALLBACK_PATH, null, headers, body);
  }

  private newKey(user: User): string {
    // Idempotency keys are unique across sales (the order table's request_id is): scope by activity.
    return `${this.o.activityId}-${user.id}-${++user.keys}`;
  }

  private forgedTicketUrl(user: User): string {
    const expires = Date.now() + 60_000;
    const ticket = `v1.${this.o.activityId}.${user.id}.${expires}.k2.${randomBytes(8).toString('hex')}.${randomBytes(32).toString('hex')}`;
    return `/api/activities/${this.o.activityId}/purchase?t=${ticket}`;
  }

  /** How far behind the curve the next newcomer is right now (0 when the generator keeps up). */
  get arrivalLagMs(): number {
    const next = this.nextArrival();
    return next ? Math.max(0, Date.now() - (this.o.startsAt + next.at)) : 0;
  }

  /** For the progress line. */
  get pending(): number {
    return this.agenda.size + this.busy;
  }
}

/** The purchase URL's ticket (`?t=v1.<activity>.<user>.<expiresAtMs>.…`, edge/ticket.ts) had expired at `at`. */
function ticketExpiredBy(purchaseUrl: string, at: number): boolean {
  const ticket = new URL(purchaseUrl, 'http://edge').searchParams.get('t') ?? '';
  const expiresAt = Number(ticket.split('.')[3]);
  return Number.isFinite(expiresAt) && expiresAt <= at;
}

export const PAYMENT_CALLBACK_PATH = '/payments/callback';

/** The payment provider's `paid` webhook for an order, signed as the provider signs it (docs/design.md §9). */
export function paymentCallback(secret: string, orderNo: string, paymentId: string) {
  const body = JSON.stringify({ orderNo, paymentId, status: 'paid' });
  const ts = String(Date.now());
  const sig = createHmac('sha256', secret).update(`${ts}\n${body}`).digest('hex');
  return {
    body,
    headers: { 'content-type': 'application/json', 'x-payment-timestamp': ts, 'x-payment-signature': `v1=${sig}` },
  };
}
