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

/** Parses `[id, [field, value, ...]]`; null when the entry is not a reservation event. */
export function parseEvent(streamId: string, fields: string[]): ReservationEvent | null {
  const f = fieldsOf(fields);
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
