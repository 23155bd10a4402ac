// For the browser scripts' type-check (tsconfig.browser.json), beyond the DOM lib: the contract's
// errors.ts, which the scripts' JSDoc types reach, sets V8's Error.stackTraceLimit.
interface ErrorConstructor {
  stackTraceLimit: number;
}
