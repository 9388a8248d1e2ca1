// Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 with the
// base64-decoded secret over "<webhook-id>.<webhook-timestamp>.<body>", sent as "v1,<base64>".
import { createHmac } from 'node:crypto';
import { SECRET_PREFIX } from './secrets.js';

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}
