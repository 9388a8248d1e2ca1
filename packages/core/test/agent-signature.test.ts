// Agent signatures (agent-signature.ts) against the data file of docs/ledger-format.md §20's
// worked example and its edge cases (testdata/agent-signatures.json): the signed text, and each
// state an entry's agent signature can be in against a register.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agentSignedTextOfCanonical, canonicalJson, ENVELOPE_FIELDS, type JsonObject, AGENT_SIGNATURE_CONTEXT, agentSignatureChecks, type AgentKey, agentSignatureState, agentSignedText, verifyAgentSignature } from '../src/index.js';

type Entry = Parameters<typeof agentSignatureState>[0];
const V = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'testdata', 'agent-signatures.json'), 'utf8')) as {
  context: string;
  signed_text: string;
  cases: Array<{ name: string; entry: Entry & { seq: number; log_id: string }; register: AgentKey[]; state: string; detail?: string }>;
};

describe('agent signatures', () => {
  it('sign the worked example\'s text under the context line', () => {
    const example = V.cases[0] as (typeof V.cases)[0];
    expect(AGENT_SIGNATURE_CONTEXT).toBe(V.context);
    expect(agentSignedText(example.entry as never)).toBe(V.signed_text);
    expect(verifyAgentSignature(example.register[0] as AgentKey, example.entry as never, example.entry.agent_signature as string)).toBe(true);
    // A register entry whose key_id is not its key's is refused, whatever the signature.
    expect(verifyAgentSignature({ ...(example.register[0] as AgentKey), key_id: '0000000000000000' }, example.entry as never, example.entry.agent_signature as string)).toBe(false);
  });

  for (const c of V.cases) {
    it(`reads as ${c.state}: ${c.name}`, () => {
      const state = agentSignatureState(c.entry, c.register);
      expect(state.state).toBe(c.state);
      if (c.detail) expect((state as { detail: string }).detail).toContain(c.detail);
    });
  }

  it('gives the same signed text from canonical data and extra as from the event (the service\'s fast path)', () => {
    const text = fc.string({ unit: 'binary' });
    const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
    const obj = fc.dictionary(text, json, { maxKeys: 5 }) as fc.Arbitrary<JsonObject>;
    const envelope = fc.record(Object.fromEntries(ENVELOPE_FIELDS.map((f) => [f, fc.option(text, { nil: null })])) as Record<string, fc.Arbitrary<string | null>>);
    fc.assert(
      fc.property(text, obj, fc.option(obj, { nil: null }), fc.option(text, { nil: null }), envelope, (eventType, data, extra, eventId, env) => {
        const fields = { event_type: eventType, event_id: eventId, ...env };
        expect(agentSignedTextOfCanonical(fields, canonicalJson(data), extra === null ? null : canonicalJson(extra))).toBe(agentSignedText({ ...fields, data, extra }));
      }),
      { numRuns: 300 },
    );
  });

  it('reports one check per signed entry and one line over them; unsigned entries add nothing', () => {
    const [valid, changed] = V.cases as [(typeof V.cases)[0], (typeof V.cases)[0]];
    const unsigned = { ...valid.entry, format_version: 3, agent_key_id: null, agent_signature: null };
    const checks = agentSignatureChecks([valid.entry, changed.entry, unsigned] as never, valid.register);
    expect(checks.map((c) => c.status)).toEqual(['ok', 'fail', 'fail']);
    expect(checks.at(-1)?.message).toBe(`1 of 3 entries signed by their agents: agent agent-7 key ${valid.entry.agent_key_id} (1); 1 agent signature does not hold`);
    expect(agentSignatureChecks([unsigned] as never, valid.register)).toEqual([]);
  });
});
