/**
 * Checks an answer of the running stack against its OpenAPI document: the status is one the document
 * lists for the route, the body parses with the schema the document was generated from (success bodies
 * are strict: an undocumented field fails), an error's code is one the document names for that status,
 * and a required response header (429's Retry-After) is there.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  errorSchema,
  errorsByStatus,
  openApiPath,
  type Method,
  type RouteDoc,
} from '../../contract/openapi/registry.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface DocumentedResponse {
  headers?: Record<string, { required?: boolean }>;
}

export interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
}

/** A checker for the routes of `routes`, as documented in `documentFile` (docs/openapi/*.json). */
export function conformance(routes: readonly RouteDoc[], documentFile: string) {
  const doc = JSON.parse(readFileSync(join(ROOT, documentFile), 'utf8')) as {
    paths: Record<string, Record<string, { responses: Record<string, DocumentedResponse> }>>;
  };
  return function assertConforms(method: Method, path: string, answer: Answer): void {
    const where = `${method.toUpperCase()} ${path} → ${answer.status} ${JSON.stringify(answer.body)}`;
    const route = routes.find((r) => r.method === method && r.path === path);
    if (!route) throw new Error(`${where}: no such route in the registry`);
    const documented = doc.paths[openApiPath(path)]?.[method]?.responses[String(answer.status)];
    if (!documented) throw new Error(`${where}: ${documentFile} lists no such status for the route`);
    const success = route.responses[answer.status];
    const schema = success ? success.schema : errorSchema(errorsByStatus(route).get(answer.status) ?? []);
    if (schema) {
      const parsed = schema.safeParse(answer.body);
      if (!parsed.success) throw new Error(`${where}: does not match the documented schema: ${parsed.error.message}`);
    }
    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      if (header.required && answer.headers.get(name) === null) throw new Error(`${where}: no ${name} header`);
    }
  };
}

/** A fetch Response as an Answer (the body read as JSON when it is JSON). */
export async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text();
  const json = (res.headers.get('content-type') ?? '').includes('json');
  return { status: res.status, body: json ? JSON.parse(text) : text, headers: res.headers };
}
