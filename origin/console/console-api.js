// The console's one door to the origin: the admin token from this tab's sessionStorage as
// `Authorization: Bearer`, the operator's name as `x-admin-actor` (the admin API records it with each
// change). Every answer is JSON; an error answer is thrown as ApiError with the contract's code.

const TOKEN_KEY = 'consoleToken';
const OPERATOR_KEY = 'consoleOperator';
/** What the admin API accepts as an actor (origin/http/admin-routes.ts). */
export const ACTOR = /^[A-Za-z0-9_.@:+-]{1,64}$/;
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

export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY) || '',
  operator: () => sessionStorage.getItem(OPERATOR_KEY) || '',
  signIn(token, operator) {
    sessionStorage.setItem(TOKEN_KEY, token);
    if (operator) sessionStorage.setItem(OPERATOR_KEY, operator);
    else sessionStorage.removeItem(OPERATOR_KEY);
  },
  signOut() {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(OPERATOR_KEY);
  },
};

/** Called when the origin refuses the token (401): the page goes back to the login prompt. */
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
  const operator = session.operator();
  if (operator && ACTOR.test(operator)) headers['x-admin-actor'] = operator;
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
