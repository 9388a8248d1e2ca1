// The service's signing keys as the public sees them, and their online rotation, without HTTP:
// a rotation retires the old key for every process at once (ledger/keyring.ts, store/keys.ts),
// and every company's chain records the signed transition. routes/keys.ts checks the operator's
// token and calls one method.
import type { KeyTransition } from '@audit-ledger/core';
import type { FastifyBaseLogger } from 'fastify';
import type { AdminTrail } from '../ingestion/recorder.js';
import type { Config } from '../kernel/config.js';
import { publicKeyView, type PublicKeyView } from '../exports/formats.js';
import type { Keyring } from '../ledger/keyring.js';
import type { AccountStore } from '../store/accounts.js';
import type { KeyStore } from '../store/keys.js';

export interface SigningKeysDeps {
  signingKeys: KeyStore;
  keyring: Pick<Keyring, 'rotate'>;
  accounts: Pick<AccountStore, 'companyIds'>;
  trail: Pick<AdminTrail, 'record'>;
  config: Pick<Config, 'ledgerOrigin'>;
  log: Pick<FastifyBaseLogger, 'info'>;
}

export class SigningKeys {
  constructor(private readonly deps: SigningKeysDeps) {}

  /** Every key the service has signed with (active and retired) and the transitions between them. */
  async published(): Promise<{ items: Array<PublicKeyView & { active: boolean; custody: 'file' | 'store' | 'pkcs11' }>; transitions: KeyTransition[] }> {
    const { signingKeys, config } = this.deps;
    return {
      items: (await signingKeys.list()).map((k) => ({
        ...publicKeyView(k, config.ledgerOrigin),
        active: k.active_to === null,
        custody: k.private_key_encrypted ? ('store' as const) : k.custody?.startsWith('pkcs11:') ? ('pkcs11' as const) : ('file' as const),
      })),
      transitions: await signingKeys.transitions(),
    };
  }

  /** A new active key, endorsed by the old one; the transition is recorded in every company's chain (the key signs them all). */
  async rotate(to: { pkcs11KeyLabel?: string } = {}): Promise<KeyTransition> {
    const { keyring, accounts, trail, log } = this.deps;
    const transition = await keyring.rotate(to);
    log.info({ old_key_id: transition.old_key_id, new_key_id: transition.new_key_id }, 'signing key rotated');
    for (const companyId of await accounts.companyIds()) await trail.record(companyId, 'signing_key.rotated', { kind: 'operator' }, { ...transition });
    return transition;
  }
}
