/** Hono typing shared by the edge's routes and middleware. */
import type { Context } from 'hono';

export interface EdgeVariables {
  traceId: string;
  /** Set once known, for the request log line. */
  userId?: string;
  activityId?: string;
  /** Error code, or `ok`; set by onError / handlers for the request log line. */
  outcome?: string;
}

export type EdgeEnv = { Bindings: Env; Variables: EdgeVariables };
export type EdgeContext = Context<EdgeEnv>;
