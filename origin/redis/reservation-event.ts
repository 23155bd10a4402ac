/**
 * The reservation event as the Lua scripts append it to a sale's Stream. The field list is written
 * once in Lua (lua/includes/reservation-event.lua) and parsed once here; keep the two side by side.
 */
import { isId } from '../../contract/ids.js';
import { fieldsOf } from './stream.js';

export interface ReservationEvent {
  streamId: string;
  reservationId: string;
  requestId: string;
  userId: string;
  quantity: number;
  traceId: string;
  ts: number;
}

/** The field names in the order lua/includes/reservation-event.lua writes them. */
const FIELD_ORDER = ['reservationId', 'requestId', 'userId', 'quantity', 'traceId', 'ts'] as const;

/** The fields by name: positionally when they are in the Lua order (every entry a script appends), else by lookup. */
function namedFields(fields: string[]): Partial<Record<(typeof FIELD_ORDER)[number], string>> {
  if (fields.length === 12 && FIELD_ORDER.every((name, i) => fields[2 * i] === name))
    return {
      reservationId: fields[1],
      requestId: fields[3],
      userId: fields[5],
      quantity: fields[7],
      traceId: fields[9],
      ts: fields[11],
    };
  return fieldsOf(fields);
}

/** Parses `[id, [field, value, ...]]`; null when the entry is not a reservation event. */
export function parseEvent(streamId: string, fields: string[]): ReservationEvent | null {
  const f = namedFields(fields);
  const quantity = Number(f.quantity);
  if (!f.reservationId || !f.requestId || !isId(f.userId) || !Number.isInteger(quantity) || quantity < 1) return null;
  return {
    streamId,
    reservationId: f.reservationId,
    requestId: f.requestId,
    userId: f.userId,
    quantity,
    traceId: f.traceId ?? '',
    ts: Number(f.ts) || 0,
  };
}
