/**
 * A typed client of the public edge API over the types openapi-typescript generates from the public
 * document (docs/openapi/public-api.d.ts, `npm run openapi`): the path, its parameters and body are
 * checked by the compiler, and each answer is typed by its status. No runtime of its own beyond fetch.
 */
import type { paths } from '../../docs/openapi/public-api.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type MethodsOf<P extends keyof paths> = {
  [M in Method]: paths[P][M] extends undefined ? never : M;
}[Method];

type ParamsOf<O> = O extends { parameters: infer X } ? X : never;
type BodyOf<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B : undefined;
type ResponsesOf<O> = O extends { responses: infer R } ? R : never;
type JsonOf<R> = R extends { content: { 'application/json': infer B } }
  ? B
  : R extends { content: infer C }
    ? C
    : never;

/** One answer: its status and the body the document gives that status. */
export type Answer<P extends keyof paths, M extends Method> = {
  [S in keyof ResponsesOf<Operation<P, M>>]: {
    status: S;
    body: JsonOf<ResponsesOf<Operation<P, M>>[S]>;
    headers: Headers;
  };
}[keyof ResponsesOf<Operation<P, M>>];

type Parameters<O> = {
  path?: Record<string, string>;
  query?: Record<string, string>;
  header?: Record<string, string>;
} & ParamsOf<O>;

export interface PublicClient {
  request<P extends keyof paths, M extends MethodsOf<P>>(
    method: M,
    path: P,
    opts: { params: Parameters<Operation<P, M>>; body?: BodyOf<Operation<P, M>>; token?: string },
  ): Promise<Answer<P, M>>;
}

export function publicClient(baseUrl: string): PublicClient {
  return {
    async request(method, path, opts) {
      const params = opts.params as {
        path?: Record<string, string>;
        query?: Record<string, string>;
        header?: Record<string, string>;
      };
      const url = new URL(
        String(path).replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) =>
          encodeURIComponent(params.path?.[name] ?? ''),
        ),
        baseUrl,
      );
      for (const [name, value] of Object.entries(params.query ?? {})) url.searchParams.set(name, value);
      const headers: Record<string, string> = { ...params.header };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(url, {
        method: String(method).toUpperCase(),
        headers,
        ...(opts.body !== undefined && { body: JSON.stringify(opts.body) }),
      });
      const text = await res.text();
      const body: unknown = (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
      return { status: res.status, body, headers: res.headers } as never;
    },
  };
}
