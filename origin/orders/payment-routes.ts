/** The payment provider's webhook `POST /payments/callback` (docs/design.md §9), HMAC signed. */
import { Hono, type MiddlewareHandler } from 'hono';
import {
  applyPayment,
  PAYMENT_SIGNATURE_HEADER,
  PAYMENT_TIMESTAMP_HEADER,
  paymentCallbackSchema,
  verifyPaymentSignature,
  type PaymentDeps,
} from './payment.js';
import type { OriginConfig } from '../platform/config.js';
import { adoptCallerTrace } from '../platform/http/middleware.js';
import type { OriginEnv } from '../platform/http/types.js';
import { jsonBody } from '../platform/http/validate.js';

/** The provider's signature over the raw body, checked before the body is parsed (401 first). */
function paymentSignature(opts: { secret: string; maxAgeMs: number }): MiddlewareHandler<OriginEnv> {
  return async function paymentSignature(c, next) {
    verifyPaymentSignature(opts.secret, opts.maxAgeMs, {
      body: c.get('rawBody'),
      timestamp: c.req.header(PAYMENT_TIMESTAMP_HEADER),
      signature: c.req.header(PAYMENT_SIGNATURE_HEADER),
    });
    // Signed by the provider: its traceparent may now name the trace (before, only a log field).
    adoptCallerTrace(c);
    await next();
  };
}

/** What the webhook uses: applying a payment, and the provider's secret and signature age. */
export interface PaymentRouteDeps extends PaymentDeps {
  config: PaymentDeps['config'] & Pick<OriginConfig, 'PAYMENT_WEBHOOK_SECRET' | 'PAYMENT_SIGNATURE_MAX_AGE_MS'>;
}

export function paymentRoutes(deps: PaymentRouteDeps) {
  const app = new Hono<OriginEnv>();
  const signed = paymentSignature({
    secret: deps.config.PAYMENT_WEBHOOK_SECRET,
    maxAgeMs: deps.config.PAYMENT_SIGNATURE_MAX_AGE_MS,
  });

  app.post('/callback', signed, jsonBody(paymentCallbackSchema), async (c) => {
    const payment = c.req.valid('json');
    const outcome = await applyPayment(deps, payment);
    c.get('log').info({ orderNo: payment.orderNo, paymentId: payment.paymentId, outcome }, 'payment');
    return c.json({ orderNo: payment.orderNo, status: 'paid' as const });
  });

  return app;
}
