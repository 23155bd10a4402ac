/** Worker entry: the Hono app plus the Durable Object classes wrangler.toml binds. */
import { app } from './app.js';

export { ActivityDO } from './durable/activity.js';
export { AdmissionDO } from './durable/admission.js';
export { EdgeFiguresDO } from './durable/edge-figures.js';
export { LiveActivitiesDO } from './durable/live-activities.js';
export { UserGateDO } from './durable/user-gate.js';

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
