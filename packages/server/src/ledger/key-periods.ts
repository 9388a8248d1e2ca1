// The signing period of every key the service has used, for the service's own checks (full
// verification, GET /logs/{id}/verify, checkpoints): the core's rules (key-periods.ts) over the
// stored transitions, each verified against its stored old key, exactly as an auditor follows
// them. A bound no signed transition gives falls back to the stored one only where a key was
// retired without a statement (a key file swapped in by hand, keyring.ts): the signed bounds win.
import { applyTransitions, instantOf, type KeyPeriod, OPEN_PERIOD, type PeriodStep, rawKeyFromBase64, verifyKeyTransition } from '@audit-ledger/core';
import type { KeyStore } from '../store/keys.js';

export interface ServiceKeys {
  publicKeys: Map<string, Uint8Array>;
  periods: Map<string, KeyPeriod>;
  /** Stored transitions that do not verify or that the period rules refuse. */
  refused: Array<Extract<PeriodStep, { taken: false }>>;
}

export async function serviceKeys(store: Pick<KeyStore, 'list' | 'transitions'>): Promise<ServiceKeys> {
  const [rows, transitions] = await Promise.all([store.list(), store.transitions()]);
  const publicKeys = new Map(rows.map((k) => [k.key_id, rawKeyFromBase64(k.public_key)]));
  const periods = new Map<string, KeyPeriod>(rows.map((k) => [k.key_id, OPEN_PERIOD]));
  const steps = applyTransitions(periods, transitions, (t) => {
    const old = publicKeys.get(t.old_key_id);
    if (!old) return `its old key ${t.old_key_id} is not a key of this service`;
    const r = verifyKeyTransition(t, old);
    return 'failure' in r ? r.failure : null;
  });
  for (const row of rows) {
    const p = periods.get(row.key_id) as KeyPeriod;
    const storedTo = instantOf(row.active_to);
    if (p.to === Number.POSITIVE_INFINITY && !Number.isNaN(storedTo)) periods.set(row.key_id, { ...p, to: storedTo, toText: row.active_to });
  }
  return { publicKeys, periods, refused: steps.filter((s): s is Extract<PeriodStep, { taken: false }> => !s.taken) };
}
