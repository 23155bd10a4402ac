// Secrets that only some deployments set: `wrangler types` lists only [secrets].required, so the
// optional ones are declared here, as possibly absent.
declare namespace Cloudflare {
  interface Env {
    /** Bot-check verifier secret (with BOT_CHECK_URL); `wrangler secret put BOT_CHECK_SECRET`. */
    BOT_CHECK_SECRET?: string;
  }
}
