/**
 * Which Durable Object instance holds what: the one place that names them (idFromName), so a
 * route, a gate and a test reach the same instance by the same name.
 *   - ActivityDO: one per activity, named by its id;
 *   - UserGateDO: `user-gate-<i>`, shard i of USER_GATE_SHARDS (a user's shard: gates.ts `shardOf`);
 *   - AdmissionDO: `<activityId>:<i>`, shard i of the activity's admissionShards (the name also keys
 *     an isolate's admission lease);
 *   - LiveActivitiesDO and EdgeFiguresDO: one each, for the whole edge.
 */

/** The ActivityDO of one activity. */
export function activityObject(env: Env, activityId: string) {
  return env.ACTIVITY.get(env.ACTIVITY.idFromName(activityId));
}

/** UserGateDO shard `shard` (rate buckets and the deny list of the users hashed to it). */
export function userGate(env: Env, shard: number) {
  return env.USER_GATE.get(env.USER_GATE.idFromName(`user-gate-${shard}`));
}

/** The name of an activity's AdmissionDO shard. */
export function admissionShardName(activityId: string, shard: number): string {
  return `${activityId}:${shard}`;
}

/** AdmissionDO shard `shard` of an activity (admission tokens and the waiting line). */
export function admissionShard(env: Env, activityId: string, shard: number) {
  return env.ADMISSION.get(env.ADMISSION.idFromName(admissionShardName(activityId, shard)));
}

/** The LiveActivitiesDO: the origin's list of live activity ids. */
export function liveActivities(env: Env) {
  return env.LIVE_ACTIVITIES.get(env.LIVE_ACTIVITIES.idFromName('live-activities'));
}

/** The EdgeFiguresDO: the edge's counters summed over every isolate. */
export function edgeFigures(env: Env) {
  return env.EDGE_FIGURES.get(env.EDGE_FIGURES.idFromName('edge-figures'));
}
