// @ts-check
// The console's one door to the origin: the admin token from this tab's sessionStorage as
// `Authorization: Bearer`. Who the operator is comes from the origin (the token's name, which the
// admin API records as the actor of every change), never from what is typed here. Every answer is
// JSON; an error answer is thrown as ApiError with the contract's code.

const TOKEN_KEY = 'consoleToken';
/** Every call gives up after this long: a stuck call must not freeze the 1 s refresh. */
const CALL_TIMEOUT_MS = 10_000;

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.code = (body && body.error) || 'internal';
    this.body = body || {};
  }
}

/** The operator the origin named for this tab's token (whoAmI), kept in memory: asked again after a
 * reload. `asking` is the whoami call in flight, shared by every caller that needs the name meanwhile. */
let operator = '';
let asking = null;

export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY) || '',
  operator: () => operator,
  signIn(token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    operator = '';
    asking = null;
  },
  signOut() {
    sessionStorage.removeItem(TOKEN_KEY);
    operator = '';
    asking = null;
  },
};

/**
 * Asks the origin whose token this is (`GET /admin/console/api/whoami` → `{operator}`) and keeps the
 * name. A refused token signs out like any 401 (api below); the ApiError is rethrown.
 */
export function whoAmI() {
  if (operator) return Promise.resolve(operator);
  if (asking) return asking;
  const call = api('GET', '/admin/console/api/whoami').then(
    (answer) => {
      // Only if the tab still has the token this answer is about.
      if (asking === call) [operator, asking] = [String(answer.operator), null];
      return answer.operator;
    },
    (err) => {
      if (asking === call) asking = null;
      throw err;
    },
  );
  asking = call;
  return call;
}

/** Called when the origin refuses the token (401): the page goes back to the login prompt. */
/** @type {(message: string) => void} */
let onUnauthenticated = () => {};
export function whenUnauthenticated(fn) {
  onUnauthenticated = fn;
}

export async function api(method, path, body) {
  const token = session.token();
  if (!token) {
    onUnauthenticated('Sign in first.');
    throw new ApiError(401, { error: 'unauthenticated', message: 'not signed in' });
  }
  const headers = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const answer = await res.json().catch(() => null);
  if (res.status === 401) {
    session.signOut();
    onUnauthenticated((answer && answer.message) || 'The token was refused.');
  }
  if (!res.ok) throw new ApiError(res.status, answer);
  return answer;
}
