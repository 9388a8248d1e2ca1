// Anchors every company's log in time outside the operator (docs/transparency.md, "External
// timestamps"): each company's latest checkpoint, when it changed since the last token, is sent to
// the configured RFC 3161 Time Stamping Authority as SHA-256 of its signed note, with a fresh
// nonce. The answer is checked (granted, a token whose imprint and nonce are ours and whose signed
// attributes digest its TSTInfo) and kept with the checkpoint; evidence bundles carry it. Whether
// the TSA is the one the auditor trusts is the auditor's check (audit-ledger-verify --tsa-ca).
import { randomBytes } from 'node:crypto';
import { checkpointImprint, parseTimeStampResponse, parseTimeStampToken, timestampProblems, timeStampRequest, toBase64, toHex } from '@audit-ledger/core';
import type { AccountStore } from '../store/accounts.js';
import type { LedgerStore } from '../store/ledger.js';
import type { WitnessStore } from '../store/witnesses.js';
import { iso } from '../kernel/time.js';
import { MAX_TSA_ANSWER_BYTES, readBoundedBytes } from '../egress/bounded.js';
import type { OperatorFetch } from '../egress/address-policy.js';

export interface TimestamperDeps {
  tsaUrl: string | undefined;
  witnessStore: Pick<WitnessStore, 'addTimestamp' | 'latestTimestamp'>;
  ledger: Pick<LedgerStore, 'latestCheckpoint'>;
  accounts: Pick<AccountStore, 'companyIds'>;
  clock: () => number;
  warn: (obj: Record<string, unknown>, msg: string) => void;
  timeoutMs?: number;
  /** Requests under the address policy (egress/address-policy.ts operatorFetch). */
  send: OperatorFetch;
  /** Told of each company's newest token every pass, so the checkpoints this process signs name it (CheckpointSigner.timestamped). */
  onToken?: (companyId: string, treeSize: number, tokenB64: string) => void;
}

export class Timestamper {
  constructor(private readonly deps: TimestamperDeps) {}

  get enabled(): boolean {
    return this.deps.tsaUrl !== undefined;
  }

  /** One pass: a token for each company whose latest checkpoint has none from this TSA yet. */
  async pass(): Promise<void> {
    const tsa = this.deps.tsaUrl;
    if (tsa === undefined) return;
    for (const companyId of await this.deps.accounts.companyIds()) {
      const cp = await this.deps.ledger.latestCheckpoint(companyId);
      if (!cp) continue;
      const last = await this.deps.witnessStore.latestTimestamp(companyId, tsa);
      // A token another process got counts too: every process's checkpoints name the newest.
      if (last) this.deps.onToken?.(companyId, Number(last.tree_size), last.token);
      if (last && Number(last.tree_size) >= cp.tree_size) continue;
      try {
        const nonce = randomBytes(8);
        const res = await this.deps.send(tsa, {
          method: 'POST',
          headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
          body: Buffer.from(timeStampRequest(checkpointImprint(cp.note), nonce)),
          signal: AbortSignal.timeout(this.deps.timeoutMs ?? 10_000),
        });
        const body = await readBoundedBytes(res, MAX_TSA_ANSWER_BYTES);
        if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
        const answer = parseTimeStampResponse(body);
        if (!answer.granted) throw new Error(`refused (status ${answer.status}${answer.text ? `: ${answer.text}` : ''})`);
        const token = parseTimeStampToken(answer.token);
        const problems = timestampProblems(token, cp.note);
        if (token.nonce === null || BigInt(`0x${token.nonce}`) !== BigInt(`0x${toHex(nonce)}`)) problems.push('the token does not carry our nonce');
        if (problems.length > 0) throw new Error(problems.join('; '));
        await this.deps.witnessStore.addTimestamp({ company_id: companyId, tree_size: cp.tree_size, tsa, token: toBase64(answer.token), gen_time: token.genTime, created_at: iso(this.deps.clock()) });
        this.deps.onToken?.(companyId, cp.tree_size, toBase64(answer.token));
      } catch (err) {
        this.deps.warn({ tsa, company_id: companyId, tree_size: cp.tree_size, err: (err as Error).message }, 'RFC 3161 timestamp failed');
      }
    }
  }
}
