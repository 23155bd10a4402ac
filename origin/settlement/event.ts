/** The reservation event settlement reads; defined next to its Lua writer in origin/redis/. */
export { parseEvent, type ReservationEvent } from '../redis/reservation-event.js';
