/**
 * What `npm run openapi` writes, computed without writing: the OpenAPI documents (docs/openapi/*.json,
 * and the public one again where the edge's asset server serves it, edge/public/api/openapi.json), the
 * TypeScript types of the public API (openapi-typescript), and the route tables of docs/api.md and
 * README.md between their `<!-- openapi:… -->` markers. Every file goes through prettier, so
 * `npm run format` leaves them as they are and the test that compares them with the repo
 * (test/origin/openapi/openapi-documents.test.ts) sees only real changes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import * as prettier from 'prettier';
import { z } from 'zod';
import { internalDocument, internalRoutes } from '../contract/openapi/internal.js';
import { publicDocument, publicRoutes } from '../contract/openapi/public.js';
import { errorsByStatus, type RouteDoc } from '../contract/openapi/registry.js';
import { adminDocument, adminRoutes } from '../origin/openapi/admin.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

const DOCUMENT_FILES = {
  public: 'docs/openapi/public.json',
  internal: 'docs/openapi/internal.json',
  admin: 'docs/openapi/admin.json',
} as const;
/** The public document where the edge serves it (`GET /api/openapi.json`, from the asset server). */
const EDGE_DOCUMENT_FILE = 'edge/public/api/openapi.json';
const CLIENT_TYPES_FILE = 'docs/openapi/public-api.d.ts';

async function pretty(path: string, text: string): Promise<string> {
  const options = (await prettier.resolveConfig(join(ROOT, path))) ?? {};
  return prettier.format(text, { ...options, filepath: join(ROOT, path) });
}

const md = (s: string) => s.replace(/\|/g, '\\|');

/** `{a, b?}`: the body's fields as its schema names them (`?`: optional). */
function bodyFields(schema: z.ZodType): string {
  if (!(schema instanceof z.ZodObject)) return '';
  const fields = Object.entries(schema.shape as Record<string, z.ZodType>).map(
    ([name, field]) => `${name}${field.isOptional() ? '?' : ''}`,
  );
  return ` body \`{${fields.join(', ')}}\``;
}

function call(r: RouteDoc): string {
  const query = Object.entries(r.query ?? {})
    .map(([name]) => `${name}=`)
    .join('&');
  const headers = Object.entries(r.headers ?? {})
    .filter(([, p]) => p.required)
    .map(([name]) => ` + \`${name}\``)
    .join('');
  const body = r.body ? bodyFields(r.body) : '';
  return `\`${r.method.toUpperCase()} ${r.path}${query ? `?${query}` : ''}\`${headers}${body}`;
}

function answers(r: RouteDoc): string {
  return Object.entries(r.responses)
    .map(([status, s]) => `${status} ${s!.description}`)
    .join('; ');
}

function errors(r: RouteDoc, withCodes: boolean): string {
  return [...errorsByStatus(r)]
    .map(([status, codes]) => {
      const retry = [425, 429, 503].includes(status) ? ' + `Retry-After`' : '';
      return withCodes ? `${status} ${codes.map((c) => `\`${c}\``).join(' / ')}${retry}` : String(status);
    })
    .join(', ');
}

/** The full table of docs/api.md: call, what it is, answers, every error status with its codes. */
function routeTable(routes: readonly RouteDoc[]): string {
  const rows = routes.map((r) => `| ${md(call(r))} | ${md(r.summary)} | ${md(answers(r))} | ${md(errors(r, true))} |`);
  return ['| call | what | answer | errors (status, code) |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** README's short table: call, answer, error statuses. */
function shortTable(routes: readonly RouteDoc[]): string {
  const rows = routes.map((r) => `| ${md(call(r))} | ${md(answers(r))} | ${md(errors(r, false))} |`);
  return ['| call | answer | error statuses |', '| --- | --- | --- |', ...rows].join('\n');
}

/** `text` with the part between `<!-- openapi:name -->` and `<!-- /openapi:name -->` replaced. */
function replaceBetweenMarkers(text: string, name: string, body: string, file: string): string {
  const begin = `<!-- openapi:${name} -->`;
  const end = `<!-- /openapi:${name} -->`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${file}: markers ${begin} … ${end} not found`);
  return `${text.slice(0, from + begin.length)}\n\n${body}\n\n${text.slice(to)}`;
}

/** The API routes of the public document, without the page and the document itself (README's table). */
const buyerRoutes = () =>
  publicRoutes.filter((r) => r.path.startsWith('/api/activities') || r.path.startsWith('/api/reservations'));

/** Every generated file: repo path → content. */
export async function generatedFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const documents = { public: publicDocument(), internal: internalDocument(), admin: adminDocument() };
  for (const [name, path] of Object.entries(DOCUMENT_FILES)) {
    files.set(path, await pretty(path, JSON.stringify(documents[name as keyof typeof documents])));
  }
  files.set(EDGE_DOCUMENT_FILE, await pretty(EDGE_DOCUMENT_FILE, JSON.stringify(documents.public)));

  const types = astToString(await openapiTS(documents.public as unknown as OpenAPI3, { silent: true }));
  const header =
    '/**\n * Types of the public edge API, generated by openapi-typescript from docs/openapi/public.json\n' +
    ' * (`npm run openapi`; do not edit). test/helpers/public-client.ts is a typed client over them.\n */\n';
  files.set(CLIENT_TYPES_FILE, await pretty(CLIENT_TYPES_FILE, header + types));

  let apiMd = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
  apiMd = replaceBetweenMarkers(apiMd, 'public', routeTable(publicRoutes), 'docs/api.md');
  apiMd = replaceBetweenMarkers(
    apiMd,
    'internal-origin',
    routeTable(internalRoutes.filter((r) => r.server === 'origin')),
    'docs/api.md',
  );
  apiMd = replaceBetweenMarkers(
    apiMd,
    'internal-edge',
    routeTable(internalRoutes.filter((r) => r.server === 'edge')),
    'docs/api.md',
  );
  apiMd = replaceBetweenMarkers(apiMd, 'admin', routeTable(adminRoutes), 'docs/api.md');
  files.set('docs/api.md', await pretty('docs/api.md', apiMd));

  const readme = replaceBetweenMarkers(
    readFileSync(join(ROOT, 'README.md'), 'utf8'),
    'public',
    shortTable(buyerRoutes()),
    'README.md',
  );
  files.set('README.md', await pretty('README.md', readme));
  return files;
}
