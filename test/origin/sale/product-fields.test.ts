/**
 * Product fields of an activity: optional on create, validated, stored in MySQL, and part
 * of the snapshot the edge gets (GET /internal/activities/:id is the same body as the push).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scalar } from '../../helpers/db.js';
import { uniqueId } from '../../helpers/ids.js';
import { startTestOrigin, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin();
});
afterAll(async () => {
  await t.stop();
});

const activity = (over: Record<string, unknown> = {}) => ({
  activityId: uniqueId(),
  skuId: uniqueId(),
  title: 'Product sale',
  stock: 3,
  startsAt: new Date(Date.now() + 60_000).toISOString(),
  endsAt: new Date(Date.now() + 3_600_000).toISOString(),
  ...over,
});
const product = {
  description: 'Noise-cancelling headphones, 30 h battery.',
  priceCents: 12_999,
  currency: 'EUR',
  imageUrl: 'https://cdn.example.com/img/headphones.png',
};

async function snapshotConfig(activityId: string) {
  const res = await t.internal('GET', `/internal/activities/${activityId}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as any).config;
}

it('stores description, price, currency and image and puts them in the snapshot', async () => {
  const a = activity(product);
  expect((await t.admin('POST', '/admin/activities', a)).status).toBe(201);
  const config = await snapshotConfig(a.activityId);
  expect({
    description: config.description,
    priceCents: config.priceCents,
    currency: config.currency,
    imageUrl: config.imageUrl,
  }).toEqual(product);
  const [rows] = (await t.db.pool.query(
    'SELECT description, price_cents, currency, image_url FROM seckill_activity WHERE id = ?',
    [a.activityId],
  )) as any;
  expect([rows[0].description, Number(rows[0].price_cents), rows[0].currency, rows[0].image_url]).toEqual([
    product.description,
    product.priceCents,
    product.currency,
    product.imageUrl,
  ]);
});

it('every product field is optional; a site-relative image path and a zero-decimal currency are fine', async () => {
  const bare = activity();
  expect((await t.admin('POST', '/admin/activities', bare)).status).toBe(201);
  const config = await snapshotConfig(bare.activityId);
  for (const field of ['description', 'priceCents', 'currency', 'imageUrl']) expect(config).not.toHaveProperty(field);

  const yen = activity({ priceCents: 5000, currency: 'JPY', imageUrl: '/img/sale/item-1.webp' });
  expect((await t.admin('POST', '/admin/activities', yen)).status).toBe(201);
  const c = await snapshotConfig(yen.activityId);
  expect([c.priceCents, c.currency, c.imageUrl]).toEqual([5000, 'JPY', '/img/sale/item-1.webp']);
});

const bad: [string, Record<string, unknown>][] = [
  ['an http (not https) image', { imageUrl: 'http://cdn.example.com/x.png' }],
  ['a protocol-relative image', { imageUrl: '//cdn.example.com/x.png' }],
  ['a javascript: image', { imageUrl: 'javascript:alert(1)' }],
  ['a data: image', { imageUrl: 'data:image/png;base64,AAAA' }],
  ['an image URL with credentials', { imageUrl: 'https://user:pw@cdn.example.com/x.png' }],
  ['an image path with a quote', { imageUrl: '/x".png' }],
  ['an image URL too long', { imageUrl: `https://cdn.example.com/${'a'.repeat(2100)}` }],
  ['a relative path without a slash', { imageUrl: 'img/x.png' }],
  ['an unknown currency', { priceCents: 100, currency: 'XYZ' }],
  ['a lowercase currency', { priceCents: 100, currency: 'eur' }],
  ['a price without currency', { priceCents: 100 }],
  ['a currency without price', { currency: 'EUR' }],
  ['a negative price', { priceCents: -1, currency: 'EUR' }],
  ['a fractional price', { priceCents: 1.5, currency: 'EUR' }],
  ['a price as a string', { priceCents: '100', currency: 'EUR' }],
  ['an empty description', { description: '' }],
  ['a description too long', { description: 'x'.repeat(2001) }],
];
for (const [name, fields] of bad) {
  it(`400 bad_request, nothing stored: ${name}`, async () => {
    const a = activity(fields);
    const res = await t.admin('POST', '/admin/activities', a);
    const body = (await res.json()) as any;
    expect([res.status, body.error]).toEqual([400, 'bad_request']);
    expect(body.message.length).toBeGreaterThan(3);
    expect(await scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_activity WHERE id = ?', [a.activityId])).toBe(0);
  });
}
