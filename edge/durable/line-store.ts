/**
 * The waiting line's rows in its AdmissionDO shard's SQLite storage (docs/design.md §10 `overflow: "queue"`):
 * one row per entry (`waiting_entry`, keyed by its sequence number, so loading in key order is line
 * order) and one row for the line itself (`waiting_line`: the id incarnation that entry ids carry,
 * the next sequence number, the counters). This module owns the SQL; the shard decides when to
 * write (edge/durable/admission.ts: changed entries in batches, joins possibly at once).
 */
import type { Claims } from '../../contract/eligibility.js';
import type { LineMeta, LineOutcome, StoredEntry } from './line-entries.js';

const STATE = { waiting: 0, admitted: 1, done: 2, dropped: 3 } as const;
const STATE_NAMES = ['waiting', 'admitted', 'done', 'dropped'] as const;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS waiting_entry (
  seq INTEGER PRIMARY KEY,
  state INTEGER NOT NULL,
  user_id TEXT NOT NULL,
  request_id TEXT,
  quantity INTEGER,
  claims TEXT,
  enqueued_at INTEGER,
  last_answer_at INTEGER,
  poll_after_ms INTEGER,
  tried INTEGER NOT NULL DEFAULT 0,
  outcome TEXT,
  ended_at INTEGER,
  limit_ms INTEGER
);
CREATE TABLE IF NOT EXISTS waiting_line (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  epoch TEXT NOT NULL,
  next_seq INTEGER NOT NULL,
  figures TEXT NOT NULL,
  saved_at INTEGER NOT NULL
);`;

const UPSERT = `INSERT OR REPLACE INTO waiting_entry
  (seq, state, user_id, request_id, quantity, claims, enqueued_at, last_answer_at, poll_after_ms, tried, outcome, ended_at, limit_ms)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

type EntryRow = {
  seq: number;
  state: number;
  user_id: string;
  request_id: string | null;
  quantity: number | null;
  claims: string | null;
  enqueued_at: number | null;
  last_answer_at: number | null;
  poll_after_ms: number | null;
  tried: number;
  outcome: string | null;
  ended_at: number | null;
  limit_ms: number | null;
};

export interface SavedLine {
  epoch: string;
  meta: LineMeta;
  entries: StoredEntry[];
}

export class LineStore {
  private readonly sql: SqlStorage;

  constructor(private readonly storage: DurableObjectStorage) {
    this.sql = storage.sql;
    this.sql.exec(SCHEMA);
  }

  /** The stored line, or undefined when this shard never stored one. */
  load(): SavedLine | undefined {
    const line = this.sql
      .exec<{ epoch: string; next_seq: number; figures: string }>(
        'SELECT epoch, next_seq, figures FROM waiting_line WHERE id = 1',
      )
      .toArray()[0];
    if (!line) return undefined;
    const entries: StoredEntry[] = [];
    for (const row of this.sql.exec<EntryRow>('SELECT * FROM waiting_entry ORDER BY seq')) entries.push(fromRow(row));
    return {
      epoch: line.epoch,
      meta: { nextSeq: line.next_seq, figures: JSON.parse(line.figures) as LineMeta['figures'] },
      entries,
    };
  }

  /** Writes the line's row and the given entries (undefined: no longer held, deleted) in one transaction. */
  save(epoch: string, meta: LineMeta, entries: [seq: number, entry: StoredEntry | undefined][], now: number): void {
    this.storage.transactionSync(() => {
      this.sql.exec(
        'INSERT OR REPLACE INTO waiting_line (id, epoch, next_seq, figures, saved_at) VALUES (1, ?, ?, ?, ?)',
        epoch,
        meta.nextSeq,
        JSON.stringify(meta.figures),
        now,
      );
      for (const [seq, entry] of entries) {
        if (entry) this.sql.exec(UPSERT, ...toRow(entry));
        else this.sql.exec('DELETE FROM waiting_entry WHERE seq = ?', seq);
      }
    });
  }
}

function toRow(e: StoredEntry): (string | number | null)[] {
  switch (e.state) {
    case 'waiting':
    case 'admitted':
      return [
        e.seq,
        STATE[e.state],
        e.userId,
        e.requestId,
        e.quantity,
        e.claims ? JSON.stringify(e.claims) : null,
        e.enqueuedAt,
        e.lastAnswerAt,
        e.pollAfterMs,
        e.tried ? 1 : 0,
        null,
        null,
        null,
      ];
    case 'done':
      return [
        e.seq,
        STATE.done,
        e.userId,
        null,
        null,
        null,
        null,
        null,
        null,
        0,
        JSON.stringify(e.outcome),
        e.endedAt,
        null,
      ];
    case 'dropped':
      return [e.seq, STATE.dropped, e.userId, null, null, null, null, null, null, 0, null, e.endedAt, e.limitMs];
  }
}

function fromRow(r: EntryRow): StoredEntry {
  const state = STATE_NAMES[r.state];
  switch (state) {
    case 'waiting':
    case 'admitted':
      return {
        seq: r.seq,
        state,
        userId: r.user_id,
        requestId: r.request_id!,
        quantity: r.quantity!,
        ...(r.claims ? { claims: JSON.parse(r.claims) as Claims } : {}),
        enqueuedAt: r.enqueued_at!,
        lastAnswerAt: r.last_answer_at!,
        pollAfterMs: r.poll_after_ms!,
        tried: r.tried === 1,
      };
    case 'done':
      return {
        seq: r.seq,
        state,
        userId: r.user_id,
        outcome: JSON.parse(r.outcome!) as LineOutcome,
        endedAt: r.ended_at!,
      };
    case 'dropped':
    default:
      return { seq: r.seq, state: 'dropped', userId: r.user_id, limitMs: r.limit_ms ?? 0, endedAt: r.ended_at! };
  }
}
