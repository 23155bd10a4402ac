/**
 * Typed reads of mysql2 replies, in the spirit of kysely's mysql driver (`{rows, numAffectedRows}`):
 * a caller names the row shape once instead of casting the reply. Each helper takes the pending
 * `db.execute(...)` / `db.query(...)` call as it is, so whether a statement is prepared stays the
 * caller's choice.
 */
import type { FieldPacket, QueryResult, ResultSetHeader } from 'mysql2/promise';

type Reply = Promise<[QueryResult, FieldPacket[]]>;

/** The rows a SELECT returned, typed as `T` (the columns it names; ids are strings, see pool.ts). */
export async function rows<T>(reply: Reply): Promise<T[]> {
  const [result] = await reply;
  return result as unknown as T[];
}

/** The first row a SELECT returned, or undefined. */
export async function one<T>(reply: Reply): Promise<T | undefined> {
  return (await rows<T>(reply))[0];
}

/** How many rows an INSERT / UPDATE / DELETE changed. */
export async function affected(reply: Reply): Promise<number> {
  const [result] = await reply;
  return (result as ResultSetHeader).affectedRows;
}

/** The AUTO_INCREMENT id an INSERT assigned, as a string (ids are strings, see pool.ts). */
export async function insertId(reply: Reply): Promise<string> {
  const [result] = await reply;
  return String((result as ResultSetHeader).insertId);
}
