/**
 * The waiting line in an admission shard's SQLite storage, inside workerd: the rows LineStore writes
 * read back the same, and a second AdmissionDO on the same storage (what a restarted or evicted shard
 * is) answers every place as the first did — same id, same position — and says why an id is unknown;
 * a position told is never below the one a restart from the rows written so far would give.
 */
import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { AdmissionDO, type EntryAnswer } from '../../../edge/durable/admission.js';
import { LineStore } from '../../../edge/durable/line-store.js';
import type { LineLimits } from '../../../edge/durable/line-entries.js';
import { WaitingLine } from '../../../edge/durable/waiting-line.js';

const limits: LineLimits = { ratePerSec: 1, pollMinMs: 250, pollBudgetPerSec: 500 };
const buyer = (n: number) => ({ userId: String(7_000 + n), requestId: `req-${n}`, quantity: 1 + (n % 2) });

function shard() {
  return env.ADMISSION.get(env.ADMISSION.idFromName(`line-storage-${crypto.randomUUID()}`));
}

describe('waiting line storage', () => {
  it('LineStore reads back every kind of entry, in sequence order, and deletes forgotten ones', async () => {
    await runInDurableObject(shard(), async (_instance: AdmissionDO, state) => {
      const store = new LineStore(state.storage);
      const line = new WaitingLine({ trackChanges: true });
      line.grant(1, limits, 0);
      line.enter({ ...buyer(1), claims: { tier: 'gold', groups: ['a', 'b'] } }, 1, limits, 0);
      for (let i = 2; i <= 5; i++) line.enter(buyer(i), 1, limits, 0);
      line.poll(1, buyer(1).userId, limits, 1_000); // turn
      line.poll(1, buyer(1).userId, limits, 1_700); // turn again (its purchase not run yet)
      line.poll(2, buyer(2).userId, limits, 2_000); // turn
      line.finish(2, buyer(2).userId, { reservationId: 'res-2' }, 2_000);
      const save = () => {
        const seqs = line.takeChanges();
        store.save(
          'e1',
          line.meta(),
          seqs.map((s) => [s, line.entryRow(s)]),
          2_000,
        );
      };
      save();
      const loaded = store.load()!;
      expect(loaded.epoch).toBe('e1');
      expect(loaded.meta).toEqual(line.meta());
      expect(loaded.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(loaded.entries).toEqual([1, 2, 3, 4, 5].map((s) => line.entryRow(s)));
      expect(loaded.entries[0]).toMatchObject({ state: 'admitted', claims: { tier: 'gold', groups: ['a', 'b'] } });
      expect(loaded.entries[1]).toMatchObject({ state: 'done', outcome: { reservationId: 'res-2' } });

      line.close('ended', limits, 3_000);
      // Long after: the outcomes are forgotten, and so are their rows.
      line.poll(3, buyer(3).userId, limits, 200_000);
      save();
      expect(store.load()!.entries).toEqual([]);
    });
  });

  it('a restarted shard (a new AdmissionDO on the same storage) keeps every place, its id and its order', async () => {
    const stub = shard();
    const places: EntryAnswer[] = [];
    // One token per 100 s: no turn accrues while the 30 join, however loaded the machine.
    const slow: LineLimits = { ...limits, ratePerSec: 0.01 };
    for (let i = 1; i <= 30; i++) places.push(await stub.enter(buyer(i), 1, slow));
    // The first buyer took the bucket's token; the other 29 wait, in order.
    expect(places[0]!.kind).toBe('admitted');
    const waiting = places.slice(1);
    expect(waiting.map((p) => (p.kind === 'waiting' ? p.position : -1))).toEqual(waiting.map((_, k) => k));
    const epoch = waiting[0]!.epoch;

    await runInDurableObject(stub, async (_instance: AdmissionDO, state) => {
      const restarted = new AdmissionDO(state, env);
      // A repeat click answers each buyer's place from storage: the same id (epoch, seq), the same order.
      for (let i = 2; i <= 30; i++) {
        const again = await restarted.enter(buyer(i), 1, slow);
        expect(again).toMatchObject({ kind: 'waiting', epoch, seq: i - 1 });
        if (again.kind === 'waiting') expect(again.position).toBeLessThanOrEqual(i - 2);
      }
      // An id from another incarnation of the line: gone, and the reason says the line was reset.
      expect(await restarted.poll('zz9', 1, buyer(2).userId, slow)).toMatchObject({
        kind: 'gone',
        reason: { why: 'reset' },
      });
      expect(await restarted.figures()).toMatchObject({ entered: 29, waiting: 29, dropped: 0 });
    });
  });

  it('a position told counts the turns and drops not yet written: a restart never moves a buyer back', async () => {
    await runInDurableObject(shard(), async (_instance: AdmissionDO, state) => {
      const store = new LineStore(state.storage);
      const line = new WaitingLine({ trackChanges: true });
      const fast: LineLimits = { ratePerSec: 2, pollMinMs: 100, pollBudgetPerSec: 50 };
      // A seeded walk: joins, polls by most buyers (every fifth never polls: a ghost, dropped and swept
      // from the middle of the line), time passing, and a batch written now and then.
      let seed = 42;
      const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
      const seqOf = new Map<number, number>();
      let now = 0;
      let users = 0;
      let compared = 0;
      line.grant(fast.ratePerSec, fast, now); // the bucket is empty: every click from here waits
      for (let step = 0; step < 600; step++) {
        now += Math.floor(rand() * 120);
        const r = rand();
        if (r < 0.35 || users < 5) {
          const answer = line.enter(buyer(++users), 1, fast, now);
          if (answer.kind === 'waiting') seqOf.set(users, answer.seq);
        } else if (r < 0.9) {
          const n = 1 + Math.floor(rand() * users);
          const seq = seqOf.get(n);
          if (seq !== undefined && n % 5 !== 0) line.poll(seq, buyer(n).userId, fast, now);
        } else {
          const seqs = line.takeChanges();
          store.save(
            'e1',
            line.meta(),
            seqs.map((s) => [s, line.entryRow(s)]),
            now,
          );
        }
        if (step % 10 !== 0) continue;
        // What a restart now would answer (a line rebuilt from the rows written so far), buyer by buyer.
        const saved = store.load();
        const restarted = WaitingLine.restore(saved?.entries ?? [], saved?.meta, now);
        for (const [n, seq] of seqOf) {
          // Only places still waiting on both sides (a click by anyone else would take a new place).
          if (line.entryRow(seq)?.state !== 'waiting' || restarted.entryRow(seq)?.state !== 'waiting') continue;
          const told = line.enter(buyer(n), 1, fast, now);
          const after = restarted.enter(buyer(n), 1, fast, now);
          // (the click itself may give the place its turn: the line advances to `now` first)
          if (told.kind !== 'waiting' || after.kind !== 'waiting') continue;
          expect([told.seq, after.seq]).toEqual([seq, seq]);
          expect([n, told.position]).toEqual([n, Math.max(told.position, after.position)]);
          compared++;
        }
      }
      // The walk compared many places, gave turns and dropped ghosts.
      expect(compared).toBeGreaterThan(200);
      const figures = line.figuresAt(now);
      expect(figures.dropped).toBeGreaterThan(0);
      expect(figures.admitted).toBeGreaterThan(0);
    });
  });
});
