// Standard Webhooks signing secrets (stored encrypted by store/secret-box.ts).
import { randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** A new Standard Webhooks secret: whsec_ + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}
