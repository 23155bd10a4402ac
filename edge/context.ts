/** Hono typing shared by the edge's routes and middleware. */
import type { Context } from 'hono';

export interface EdgeVariables {
  /** Minted by the edge for every request; a client's traceparent is never trusted as the id. */
  traceId: string;
  /** The request body, read once within its size and time limits (middleware/body-limit.ts). */
  body: string;
  /** Set once known, for the request log line. */
  userId?: string;
  /** The verified JWT's claims (eligibility reads one of them). */
  claims?: Record<string, unknown>;
  activityId?: string;
  /** Error code, or `ok`; set by onError / handlers for the request log line. */
  outcome?: string;
}

export type EdgeEnv = { Bindings: Env; Variables: EdgeVariables };
export type EdgeContext = Context<EdgeEnv>;
