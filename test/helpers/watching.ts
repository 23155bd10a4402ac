/** Buyers through a real edge (ticket, then purchase), and one doomed click, for the edge's figures. */
import { sign } from 'hono/jwt';
import { TEST_EDGE_SECRETS } from './edge-test-secrets.js';

export async function purchaseThroughEdge(edgeUrl: string, activityId: string, userIds: string[]): Promise<void> {
  for (const userId of userIds) {
    const exp = Math.floor(Date.now() / 1000) + 600;
    const authorization = `Bearer ${await sign({ sub: userId, exp }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256')}`;
    const ticket = await fetch(`${edgeUrl}/api/activities/${activityId}/tickets`, {
      method: 'POST',
      headers: { authorization },
    });
    if (ticket.status !== 200) throw new Error(`ticket: ${ticket.status} ${await ticket.text()}`);
    const { purchaseUrl } = (await ticket.json()) as { purchaseUrl: string };
    const bought = await fetch(`${edgeUrl}${purchaseUrl}`, {
      method: 'POST',
      headers: { authorization, 'idempotency-key': `watch-${userId}`, 'content-type': 'application/json' },
      body: '{"quantity":1}',
    });
    if (bought.status !== 202) throw new Error(`purchase: ${bought.status} ${await bought.text()}`);
    // A click without a ticket: refused at the edge (bad_ticket), no origin call.
    await (
      await fetch(`${edgeUrl}/api/activities/${activityId}/purchase`, {
        method: 'POST',
        headers: { authorization, 'idempotency-key': `doomed-${userId}`, 'content-type': 'application/json' },
        body: '{"quantity":1}',
      })
    ).arrayBuffer();
  }
}
