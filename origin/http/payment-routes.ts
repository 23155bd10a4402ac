/** The payment provider's webhook `POST /payments/callback` (DESIGN §9), HMAC signed. */
import { Hono } from 'hono';
import type { OriginContext } from '../context.js';
import {
  applyPayment,
  PAYMENT_SIGNATURE_HEADER,
  PAYMENT_TIMESTAMP_HEADER,
  paymentCallbackSchema,
  verifyPaymentSignature,
} from '../lifecycle/payment.js';
import { parseJson } from './middleware.js';
import type { OriginEnv } from './types.js';

export function paymentRoutes(ctx: OriginContext) {
  const app = new Hono<OriginEnv>();

  app.post('/callback', async (c) => {
    const body = c.get('rawBody');
    verifyPaymentSignature(ctx.config.PAYMENT_WEBHOOK_SECRET, ctx.config.PAYMENT_SIGNATURE_MAX_AGE_MS, {
      body,
      timestamp: c.req.header(PAYMENT_TIMESTAMP_HEADER),
      signature: c.req.header(PAYMENT_SIGNATURE_HEADER),
    });
    const payment = paymentCallbackSchema.parse(parseJson(body));
    const outcome = await applyPayment(ctx, payment);
    c.get('log').info({ orderNo: payment.orderNo, paymentId: payment.paymentId, outcome }, 'payment');
    return c.json({ orderNo: payment.orderNo, status: 'paid' as const });
  });

  return app;
}
