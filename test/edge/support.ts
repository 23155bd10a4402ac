/** Helpers for the workerd edge tests: tokens, snapshots, pushes, and steering the stand-in origin. */
import { SELF, env } from 'cloudflare:test';
import { sign } from 'hono/jwt';
import { inject } from 'vitest';
import type { ActivitySnapshot } from '../../contract/index.js';
import { liveActivities } from '../../edge/durable/names.js';
import { openSnapshot, pushSnapshot, signedPut, type SnapshotOverrides } from '../../support/edge-calls.js';
import type { ActivityBehaviour, OriginCalls } from '../../support/stand-in-origin.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';

export const BASE = 'https://edge.test';
/** Requests go to the Worker under test, in this workerd. */
const selfFetch = (url: string, init: RequestInit) => SELF.fetch(url, init);
const originUrl = () => inject('standInOriginUrl');

let counter = 0;
/** A fresh activity id per test, so tests share no state (DO, isolate cache, stand-in maps). */
export function newActivityId(): string {
  counter++;
  return String(1_000_000 + Math.floor(Math.random() * 1_000_000_000) * 100 + counter);
}

let userCounter = 0;
export function newUserId(): string {
  userCounter++;
  return String(5_000_000 + Math.floor(Math.random() * 1_000_000_000) * 100 + userCounter);
}

export async function bearer(
  userId: string,
  opts: { expSeconds?: number; secret?: string; claims?: Record<string, unknown> } = {},
): Promise<string> {
  const exp = Math.floor(Date.now() / 1000) + (opts.expSeconds ?? 3600);
  const payload = { ...opts.claims, sub: userId, exp };
  return `Bearer ${await sign(payload, opts.secret ?? TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256')}`;
}

export function snapshotOf(activityId: string, over: SnapshotOverrides = {}): ActivitySnapshot {
  return openSnapshot(activityId, {
    skuId: '77',
    title: `Test sale ${activityId}`,
    admissionRatePerSec: 10_000,
    admissionShards: 2,
    ...over,
  });
}

/** The origin's `PUT /internal/activities/:id`, signed per §9. */
export async function push(
  snapshot: ActivitySnapshot,
  secret: string = TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET,
): Promise<Response> {
  return pushSnapshot(BASE, secret, snapshot, selfFetch);
}

/** The origin's `PUT /internal/activities`: the full list of live activity ids (docs/design.md §10). */
export async function pushLiveList(
  activityIds: string[],
  secret: string = TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET,
): Promise<Response> {
  return signedPut(BASE, secret, '/internal/activities', JSON.stringify({ activityIds }), selfFetch);
}

/** Puts ids on the live list without dropping the ones other tests rely on (the list is one per edge). */
export async function addToLiveList(...activityIds: string[]): Promise<void> {
  const stub = liveActivities(env);
  const res = await pushLiveList([...(await stub.list()), ...activityIds]);
  if (res.status !== 200) throw new Error(`live list push: ${res.status} ${await res.text()}`);
}

export async function setOrigin(activityId: string, behaviour: ActivityBehaviour): Promise<void> {
  const res = await fetch(`${originUrl()}/__control/activities/${activityId}`, {
    method: 'PUT',
    body: JSON.stringify(behaviour),
  });
  if (!res.ok) throw new Error(`stand-in control failed: ${res.status}`);
}

export async function originCalls(activityId: string): Promise<OriginCalls> {
  return (await fetch(`${originUrl()}/__control/calls/${activityId}`)).json();
}

export async function ticket(activityId: string, userId: string): Promise<Response> {
  return SELF.fetch(`${BASE}/api/activities/${activityId}/tickets`, {
    method: 'POST',
    headers: { authorization: await bearer(userId) },
  });
}

export async function purchaseUrlFor(activityId: string, userId: string): Promise<string> {
  const res = await ticket(activityId, userId);
  if (res.status !== 200) throw new Error(`ticket: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { purchaseUrl: string }).purchaseUrl;
}

export async function purchase(
  purchaseUrl: string,
  userId: string,
  opts: { key?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  return SELF.fetch(`${BASE}${purchaseUrl}`, {
    method: 'POST',
    headers: {
      authorization: await bearer(userId),
      'idempotency-key': opts.key ?? crypto.randomUUID(),
      'content-type': 'application/json',
      ...opts.headers,
    },
    body: opts.body ?? '{"quantity":1}',
  });
}

/** An open activity pushed to the edge; returns its id. */
export async function openActivity(over: Parameters<typeof snapshotOf>[1] = {}): Promise<string> {
  const activityId = newActivityId();
  const res = await push(snapshotOf(activityId, over));
  if (res.status !== 200) throw new Error(`push: ${res.status} ${await res.text()}`);
  return activityId;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
