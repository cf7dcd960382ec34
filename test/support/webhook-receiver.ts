import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** A webhook as the receiver got it, its signature checked with the secret. */
export interface ReceivedWebhook {
  id: string;
  /** The parsed body, when the signature verified; undefined when it did not. */
  payload?: { type: string; timestamp: string; data: Record<string, any> };
  status: number;
}

/** What to answer the next request: a status, or `hang` (never answer). */
export type Answer = number | 'hang';

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Answers for the next requests, in order; then 200. */
  answers: Answer[];
  /** Resolves with the received webhooks once `count` match. */
  waitFor(match: (w: ReceivedWebhook) => boolean, count?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export const TEST_WEBHOOK_SECRET = `whsec_${Buffer.from('a test secret of 32 bytes, fixed').toString('base64')}`;

/** A webhook receiver on a free loopback port that verifies every request (Standard Webhooks). */
export async function startWebhookReceiver(secret = TEST_WEBHOOK_SECRET, port = 0): Promise<WebhookReceiver> {
  const verifier = new Webhook(secret);
  const received: ReceivedWebhook[] = [];
  const answers: Answer[] = [];
  const waiters = new Set<() => void>();
  const hanging = new Set<ServerResponse>();
  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    let payload: ReceivedWebhook['payload'];
    try {
      payload = verifier.verify(body, headers) as ReceivedWebhook['payload'];
    } catch {
      payload = undefined;
    }
    const answer = answers.shift() ?? 200;
    received.push({ id: headers['webhook-id'], payload, status: answer === 'hang' ? 0 : answer });
    for (const wake of waiters) wake();
    if (answer === 'hang') hanging.add(res);
    else res.writeHead(answer).end();
  };
  const server = createServer((req, res) => void onRequest(req, res));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    answers,
    waitFor(match, count = 1) {
      return new Promise((resolve) => {
        const check = () => {
          const found = received.filter(match);
          if (found.length < count) return;
          waiters.delete(check);
          resolve(found);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
