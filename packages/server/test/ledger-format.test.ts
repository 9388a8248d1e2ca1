// The core against published vectors, and the worked example of docs/ledger-format.md
// recomputed from the document itself.
import { spawnSync } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkpointImprint, parseTimeStampToken, timestampProblems, timeStampRequest, decodeEntryBundle, encodeEntryBundle, leafHash, tileIndexPath, tilePath, canonicalEntryText, canonicalJson, contentCommitment, contentState, contentText, HASHED_FIELDS_V2, HASHED_FIELDS_V3, HASHED_FIELDS_V4, AGENT_SIGNED_FIELDS, agentKeyProofMessage, agentSignatureState, agentSignedMessage, agentSignedText, skeletonLinks, fromBase64, fromHex, type EntryBody, entryBody, entryHash, entryLeafHash, GENESIS_PREV_HASH, type Hash, HASHED_FIELDS, type JsonObject, keyIdOf, type LedgerEntry, noteSignedBy, parseCheckpointText, parseNote, referenceRoot, sha256Hex, toHex, verifierKey, verifyEntrySignature, verifyInclusion, verifyKeyTransition } from '@audit-ledger/core';
import { publicKeyFromRaw, rawPublicKey, signEntryHash, signKeyTransition, signNote } from '../src/crypto/signing.js';
import { memoryCustody } from '../src/crypto/custody.js';
import { runCli } from './helpers/process.js';
import { pemCertificates, tsaSignatureProblem } from '@audit-ledger/verify';
import { type AuditEvent, storedView } from '@audit-ledger/sdk';

const RFC8032_SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const rfc8032Key = () =>
  createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(RFC8032_SEED, 'hex')]), format: 'der', type: 'pkcs8' });

describe('published vectors', () => {
  it('SHA-256 (FIPS 180-2 "abc")', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('RFC 8785 canonical JSON (section 3.2.2 example)', () => {
    const input = JSON.parse('{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}');
    expect(canonicalJson(input)).toBe('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  it('RFC 8785 sorts member names by UTF-16 code units', () => {
    expect(canonicalJson({ '\u20ac': 1, '\r': 2, '\ud83d\ude00': 3, '1': 4, '\u0080': 5, 'ö': 6 })).toBe('{"\\r":2,"1":4,"\u0080":5,"ö":6,"€":1,"😀":3}');
  });

  it('Ed25519 (RFC 8032 section 7.1, test 1)', () => {
    const priv = rfc8032Key();
    expect(toHex(rawPublicKey(createPublicKey(priv)))).toBe('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
    expect(sign(null, Buffer.alloc(0), priv).toString('hex')).toBe(
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
    );
  });
});

describe('the append fast path', () => {
  // Random JSON with the awkward parts of RFC 8785: escapes, non-BMP characters, numbers.
  const chars = ['a', 'Z', '"', '\\', '\n', '\u0001', '\u001f', '\u007f', 'é', '€', '\ud83d\ude00', '\u2028', ' ', '/'];
  let seed = 42;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const str = () => Array.from({ length: rnd(8) }, () => chars[rnd(chars.length)]).join('');
  const num = () => [0, -0, 1, -1.5, 1e21, 1e-7, 123456789.123, 2 ** 53, 0.1 + 0.2, 5e-324][rnd(10)] as number;
  const value = (depth: number): unknown => {
    const k = rnd(depth > 2 ? 4 : 6);
    if (k === 0) return str();
    if (k === 1) return num();
    if (k === 2) return [null, true, false][rnd(3)];
    if (k === 3) return null;
    if (k === 4) return Array.from({ length: rnd(4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: rnd(5) }, () => [str(), value(depth + 1)]));
  };
  const obj = () => Object.fromEntries(Array.from({ length: rnd(6) }, () => [str(), value(1)])) as JsonObject;
  const maybe = () => (rnd(2) ? str() : null);

  it('builds the same canonical text as the generic RFC 8785 path, on 2000 random entries of each format version', () => {
    for (let i = 0; i < 6000; i++) {
      const version = (i % 3) + 1;
      const data = obj();
      const extra = rnd(2) ? obj() : null;
      const links = version === 3 && rnd(2) ? obj() : null;
      const body: EntryBody = {
        format_version: version, content_commitment: version > 1 ? str() : null, company_id: str(), seq: rnd(1_000_000), log_id: str(), event_type: str(), data,
        source: maybe(), trace_id: maybe(), session_id: maybe(), timestamp: maybe(), span_id: maybe(), parent_span_id: maybe(), parent_event_id: maybe(),
        root_event_id: maybe(), agent_id: maybe(), workflow_id: maybe(), causality_type: maybe(), idempotency_key: maybe(), schema_version: maybe(),
        extra, created_at: str(), prev_hash: str(), ...(version === 3 ? { event_id: maybe(), links } : {}),
      };
      const fast = canonicalEntryText(body, canonicalJson(data), extra === null ? null : canonicalJson(extra), links === null ? null : canonicalJson(links));
      expect(fast).toBe(canonicalJson(entryBody(body)));
    }
  });
});

describe('docs/ledger-format.md worked example', () => {
  const doc = fs.readFileSync(path.join(import.meta.dirname, '..', '..', '..', 'docs', 'ledger-format.md'), 'utf8');
  const block = (tag: string): string => {
    const m = new RegExp('```\\w+ ' + tag + '\\n([\\s\\S]*?)\\n```').exec(doc);
    if (!m?.[1]) throw new Error(`no block ${tag} in docs/ledger-format.md`);
    return m[1];
  };
  const entries = JSON.parse(block('example-entries')) as LedgerEntry[];

  it('the version 1 fixture (packages/core/testdata/v1-export) is the example, and the verifier CLI says VERIFIED for it and FAIL for one changed byte', async () => {
    const dir = path.join(import.meta.dirname, '..', '..', 'core', 'testdata', 'v1-export');
    const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
    const lines = read('export.jsonl').trimEnd().split('\n');
    expect(lines.map((l) => { const { content_hash: _c, idempotency_conflict_of: _i, ...e } = JSON.parse(l) as Record<string, unknown>; return e; })).toEqual(entries);
    expect(read('checkpoint.txt')).toBe(`${block('example-checkpoint')}\n`);
    expect(read('key.txt').trim()).toBe(verifierKey('audit-ledger.local', fromHex(block('example-public-key').trim())));
    const ok = await runCli(['verify-bundle', path.join(dir, 'export.jsonl'), '--checkpoint', path.join(dir, 'checkpoint.txt'), '--public-key', path.join(dir, 'key.txt')], {});
    expect(ok.stdout, ok.stderr).toContain('VERIFIED: every check holds');
    expect(ok.code).toBe(0);
    const changed = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'v1-')), 'export.jsonl');
    fs.writeFileSync(changed, read('export.jsonl').replace('"amount":42.5', '"amount":42.6'));
    const bad = await runCli(['verify-bundle', changed, '--checkpoint', path.join(dir, 'checkpoint.txt'), '--public-key', path.join(dir, 'key.txt')], {});
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('FAIL entry seq 0');
  });

  it("the doc's self-contained JCS reference in Python gives the core's canonical form: the RFC 8785 vectors, the example entry and 20,000 generated values", () => {
    const vectors = (JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'core', 'testdata', 'rfc8785-jcs.json'), 'utf8')) as { good: Array<{ input: string; canonical: string }> }).good;
    // Seeded doubles over every exponent, plus strings and keys with the awkward code points.
    let seed = 7;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const buf = new DataView(new ArrayBuffer(8));
    const values: unknown[] = [];
    for (let i = 0; i < 20_000; i++) {
      buf.setUint32(0, Math.floor(next() * 2 ** 32));
      buf.setUint32(4, Math.floor(next() * 2 ** 32));
      const d = buf.getFloat64(0);
      values.push(Number.isFinite(d) ? d : i, Number((next() * 10 ** (next() * 40 - 15)).toPrecision(1 + Math.floor(next() * 17))));
    }
    values.push({ '\u20ac': 1, '\r': [-0, 1e21, 1e-7, 5e-324], '\ud83d\ude00': 'line\u2028\u0001\u007f"\\', '1': null, '\u0080': true, ö: { b: 1, a: 2 } });
    const inputs = [...vectors.map((v) => JSON.parse(v.input) as unknown), entryBody(entries[0] as LedgerEntry), ...values];
    const script = `${block('jcs-reference')}\nimport sys\nfor line in sys.stdin:\n    print(jcs(json.loads(line, parse_int=float)))\n`;
    const run = spawnSync('python3', ['-c', script], { input: inputs.map((v) => JSON.stringify(v)).join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 26 });
    expect(run.status, run.stderr).toBe(0);
    const got = run.stdout.split('\n').slice(0, -1);
    expect(got.slice(0, vectors.length)).toEqual(vectors.map((v) => v.canonical));
    expect(got[vectors.length]).toBe(block('example-canonical-0'));
    const want = inputs.map((v) => canonicalJson(v as JsonObject));
    const wrong = got.map((g, i) => (g === want[i] ? null : `${JSON.stringify(inputs[i])}: ${g} ≠ ${want[i]}`)).filter((x) => x !== null);
    expect(wrong.slice(0, 5)).toEqual([]);
  });
  const rawKey = fromHex(block('example-public-key').trim());
  const publicKey = publicKeyFromRaw(rawKey);

  it('lists exactly the hashed fields, plus hash, signature and key_id', () => {
    for (const e of entries) expect(Object.keys(e).sort()).toEqual([...HASHED_FIELDS, 'hash', 'signature', 'key_id'].sort());
  });

  it('gives the key_id of its public key', () => {
    expect(keyIdOf(rawKey)).toBe(block('example-key-id').trim());
  });

  it('gives the canonical bytes of entry 0, and they hash to its hash', () => {
    const e0 = entries[0] as LedgerEntry;
    expect(canonicalJson(entryBody(e0))).toBe(block('example-canonical-0'));
    expect(sha256Hex(block('example-canonical-0'))).toBe(e0.hash);
  });

  it('has entries whose hashes, links and signatures all verify', () => {
    let prev = GENESIS_PREV_HASH;
    for (const e of entries) {
      expect(entryHash(e)).toBe(e.hash);
      expect(e.prev_hash).toBe(prev);
      expect(e.key_id).toBe(keyIdOf(rawKey));
      expect(verifyEntrySignature(rawKey, e.hash, e.signature)).toBe(true);
      // Deterministic: signing again with the RFC 8032 key gives the documented bytes.
      expect(signEntryHash(rfc8032Key(), e.hash)).toBe(e.signature);
      prev = e.hash;
    }
  });

  it('gives the leaf hashes, root, inclusion proofs and signed checkpoint of the two-entry tree', () => {
    const leaves = entries.map((e) => entryLeafHash(e.hash));
    expect(leaves.map(toHex).join('\n')).toBe(block('example-leaves'));
    const root = referenceRoot(leaves);
    expect(toHex(root)).toBe(block('example-root'));
    expect(verifyInclusion(0, 2, leaves[0] as Hash, [leaves[1] as Hash], root)).toBe(true);
    expect(verifyInclusion(1, 2, leaves[1] as Hash, [leaves[0] as Hash], root)).toBe(true);
    const note = `${block('example-checkpoint')}\n`;
    const raw = rawKey;
    expect(noteSignedBy(note, 'audit-ledger.local', raw)).toBe(true);
    expect(verifierKey('audit-ledger.local', raw)).toBe('audit-ledger.local+218f0fd6+AddamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea');
    const c = parseCheckpointText(parseNote(note).text);
    expect(c).toMatchObject({ origin: `audit-ledger.local/${entries[0]?.company_id}`, treeSize: 2 });
    expect(c.rootHash).toEqual(root);
    // Deterministic, so signing the body again gives the documented note.
    expect(signNote(parseNote(note).text, 'audit-ledger.local', memoryCustody(rfc8032Key()), raw)).toBe(note);
  });

  it('gives the tlog-tiles view of the two-entry tree (section 18): its level 0 tile and entry bundle, by the spec and by the core', () => {
    const leaves = entries.map((e) => entryLeafHash(e.hash));
    expect(block('example-tile')).toBe(leaves.map(toHex).join('\n'));
    // The spec's entry bundle: uint16 big-endian length, then the leaf data (the entry hash's 32 bytes), whose RFC 6962 leaf hash is the tile's.
    const bundle = fromHex(block('example-entry-bundle'));
    expect(toHex(encodeEntryBundle(entries.map((e) => fromHex(e.hash))))).toBe(block('example-entry-bundle'));
    const data = decodeEntryBundle(bundle);
    expect(data.map((d) => toHex(leafHash(d)))).toEqual(leaves.map(toHex));
    expect(bundle.length).toBe(2 * 34);
    expect(tilePath({ level: 0, index: 0, width: 2 })).toBe('tile/0/000.p/2');
    expect(tileIndexPath(1234067)).toBe('x001/x234/067');
    expect(doc).toContain('1234067 is\n`x001/x234/067`');
  });

  it('gives the RFC 3161 imprint and request of the section 11 checkpoint (section 19), and the OpenSSL token of testdata verifies for it', () => {
    const note = `${block('example-checkpoint')}\n`;
    expect(createHash('sha256').update(note, 'utf8').digest('hex')).toBe(block('example-tsa-imprint'));
    expect(toHex(checkpointImprint(note))).toBe(block('example-tsa-imprint'));
    expect(toHex(timeStampRequest(checkpointImprint(note), Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8])))).toBe(block('example-tsa-request'));
    const dir = path.join(import.meta.dirname, '..', '..', 'core', 'testdata', 'rfc3161');
    const token = parseTimeStampToken(new Uint8Array(fs.readFileSync(path.join(dir, 'token.der'))));
    expect(timestampProblems(token, note)).toEqual([]);
    expect(tsaSignatureProblem(token, pemCertificates(fs.readFileSync(path.join(dir, 'ca.pem'), 'utf8')))).toBeNull();
  });

  /**
   * What every content-committing example must hold (sections 14 and 16): its content text and
   * commitment, its canonical body and hash, exactly its version's hashed fields, an intact
   * content state, its signature by the RFC 8032 key; erased, the same hash and an erased state.
   */
  function checkCommittedExample(version: 'v2' | 'v3' | 'v4', fields: ReadonlyArray<string>) {
    const e = JSON.parse(block(`example-${version}-entry`)) as LedgerEntry;
    const text = block(`example-${version}-content`);
    expect(contentText(canonicalJson(e.data as JsonObject), null)).toBe(text);
    expect(contentCommitment(fromBase64(e.content_salt as string), text)).toBe(e.content_commitment);
    expect(canonicalJson(entryBody(e) as JsonObject)).toBe(block(`example-${version}-canonical`));
    expect(sha256Hex(block(`example-${version}-canonical`))).toBe(e.hash);
    expect(Object.keys(entryBody(e)).sort()).toEqual([...fields].sort());
    expect(doc).toContain(`The hash covers these ${fields.length} fields`);
    expect(contentState(e)).toEqual({ state: 'intact' });
    expect(verifyEntrySignature(rawKey, e.hash, e.signature)).toBe(true);
    expect(signEntryHash(rfc8032Key(), e.hash)).toBe(e.signature);
    // Erased: the same hash, and the content state says so.
    const erased = { ...e, data: null, extra: null, content_salt: null };
    expect(entryHash(erased)).toBe(e.hash);
    expect(contentState(erased)).toEqual({ state: 'erased' });
    return { e, erased };
  }

  it('gives a version 2 entry whose commitment, canonical body, hash and signature verify, erased or not', () => {
    const { e } = checkCommittedExample('v2', HASHED_FIELDS_V2);
    expect(e.prev_hash).toBe(entries[1]?.hash);
    expect(contentState({ ...e, data: { tool: 'other' } }).state).toBe('mismatch');
  });

  it('gives a version 3 entry whose links, commitment, canonical body, hash and signature verify, erased or not, and whose links the rule rebuilds', () => {
    const { e, erased } = checkCommittedExample('v3', HASHED_FIELDS_V3);
    expect(e.prev_hash).toBe((JSON.parse(block('example-v2-entry')) as LedgerEntry).hash);
    expect(e.links).toEqual(skeletonLinks(e.data as JsonObject));
    expect(Object.keys(entryBody(e))).toEqual([...HASHED_FIELDS_V3]);
    const section16 = doc.slice(doc.indexOf('## 16.'));
    const listed = /hashed exactly as in\nsection 3:\n\n([\s\S]*?)\n\n/.exec(section16)?.[1] ?? '';
    expect([...listed.matchAll(/`(\w+)`/g)].map((m) => m[1])).toEqual([...HASHED_FIELDS_V3]);
    // Erased, the links stay and are no longer compared with anything. Links that are not the
    // content's: a content mismatch (the hash changes too, as for any hashed field).
    expect(contentState({ ...e, links: { decision_id: 'dec-8' } })).toMatchObject({ state: 'mismatch', detail: expect.stringContaining('links') });
    expect(contentState({ ...e, links: null })).toMatchObject({ state: 'mismatch' });
    expect(contentState({ ...erased, links: ['x'] as unknown as JsonObject })).toMatchObject({ state: 'mismatch', detail: expect.stringContaining('neither null nor a JSON object') });
  });

  it('gives a version 4 entry whose agent signature, commitment, canonical body, hash and signature verify; the agent key, the event sent and the doc\'s Python agree', () => {
    const { e, erased } = checkCommittedExample('v4', HASHED_FIELDS_V4);
    expect(e.prev_hash).toBe((JSON.parse(block('example-v3-entry')) as LedgerEntry).hash);
    const section20 = doc.slice(doc.indexOf('## 20.'));
    const listed = /hashed\s+exactly as in\s+section 3:\n\n([\s\S]*?)\n\n/.exec(section20)?.[1] ?? '';
    expect([...listed.matchAll(/`(\w+)`/g)].map((m) => m[1])).toEqual([...HASHED_FIELDS_V4]);
    const signedListed = /these 17 members[\s\S]*?\n\n([\s\S]*?)\n\n/.exec(section20)?.[1] ?? '';
    expect([...signedListed.matchAll(/`(\w+)`/g)].map((m) => m[1])).toEqual([...AGENT_SIGNED_FIELDS]);
    // The agent's key: RFC 8032 section 7.1 test 3.
    const agentKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from('c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7', 'hex')]), format: 'der', type: 'pkcs8' });
    const [keyId, publicKey] = block('example-v4-agent-key').split(' ') as [string, string];
    expect(toHex(rawPublicKey(createPublicKey(agentKey)))).toBe('fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025');
    expect(Buffer.from(rawPublicKey(createPublicKey(agentKey))).toString('base64')).toBe(publicKey);
    expect(keyIdOf(fromBase64(publicKey))).toBe(keyId);
    // What the agent signed: the entry's view of the event, and the SDK's view of the event it sent.
    const sent = JSON.parse(block('example-v4-event')) as AuditEvent;
    expect(agentSignedText(e as never)).toBe(block('example-v4-signed'));
    const { agent_key_id: _k, agent_signature: _s, ...unsigned } = sent;
    expect(agentSignedText(storedView(unsigned as AuditEvent))).toBe(block('example-v4-signed'));
    expect(sign(null, agentSignedMessage(e as never), agentKey).toString('base64')).toBe(e.agent_signature);
    expect([sent.agent_key_id, sent.agent_signature]).toEqual([keyId, e.agent_signature]);
    const register = [{ key_id: keyId, agent_id: 'agent-7', public_key: publicKey, active_from: '2026-03-01T00:00:00Z', active_to: null }];
    expect(agentSignatureState(e, register)).toEqual({ state: 'valid', key_id: keyId, agent_id: 'agent-7' });
    expect(agentSignatureState(erased, register)).toEqual({ state: 'erased', key_id: keyId });
    expect(agentSignatureState({ ...e, data: { ...(e.data as JsonObject), amount: 43 } }, register)).toMatchObject({ state: 'invalid' });
    expect(agentSignatureState(e, [{ ...register[0] as (typeof register)[0], active_to: '2026-03-01T12:00:01.000Z' }])).toMatchObject({ state: 'invalid', detail: expect.stringContaining('outside') });
    // The doc's Python builds the same message.
    const script = `${block('jcs-reference')}\nHASHED_FIELDS_V3 = []\n${block('agent-reference')}\nimport sys\nprint(agent_message(json.loads(sys.stdin.read(), parse_int=float)).decode("utf-8"), end="")\n`;
    const run = spawnSync('python3', ['-c', script], { input: block('example-v4-entry'), encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe(`audit-ledger/v1/agent-event\n${block('example-v4-signed')}`);
    // The registration's proof of possession: the core's message, the key's signature, the doc's Python.
    const registered = { agent_id: 'agent-7', public_key: publicKey, proof: block('example-v4-key-proof-signature') };
    expect(new TextDecoder().decode(agentKeyProofMessage({ company_id: e.company_id, agent_id: 'agent-7', public_key: publicKey }))).toBe(block('example-v4-key-proof'));
    expect(sign(null, agentKeyProofMessage({ company_id: e.company_id, agent_id: 'agent-7', public_key: publicKey }), agentKey).toString('base64')).toBe(registered.proof);
    const proofScript = `${block('jcs-reference')}\nimport base64\nfrom cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey\nHASHED_FIELDS_V3 = []\n${block('agent-reference')}\nimport sys\nr = json.loads(sys.stdin.read())\nagent_key_proof_ok(r, "${e.company_id}")\ntry:\n    agent_key_proof_ok(r, "another-company")\n    print("accepted another company")\nexcept Exception:\n    print("ok", end="")\n`;
    const proofRun = spawnSync('python3', ['-c', proofScript], { input: JSON.stringify(registered), encoding: 'utf8' });
    expect(proofRun.status, proofRun.stderr).toBe(0);
    expect(proofRun.stdout).toBe('ok');
  });

  it("the links rule's examples, by the core and by the doc's Python", () => {
    const cases = block('example-v3-links').split('\n').map((l) => l.split(' → ') as [string, string]);
    expect(cases.length).toBeGreaterThanOrEqual(6);
    // The same cases as the core's data file (packages/core/testdata/links.json).
    const file = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'core', 'testdata', 'links.json'), 'utf8')) as { cases: Array<{ data: unknown; links: unknown }> };
    expect(file.cases).toEqual(cases.map(([d, l]) => ({ data: JSON.parse(d) as unknown, links: JSON.parse(l) as unknown })));
    for (const [data, links] of cases) expect(canonicalJson(skeletonLinks(JSON.parse(data) as JsonObject)), data).toBe(canonicalJson(JSON.parse(links) as JsonObject));
    const example = (JSON.parse(block('example-v3-entry')) as LedgerEntry).data as JsonObject;
    const script = `${block('jcs-reference')}\nHASHED_FIELDS_V2 = []\n${block('links-reference')}\nimport sys\nfor line in sys.stdin:\n    print(jcs(links_of(json.loads(line, parse_int=float))))\n`;
    const inputs = [...cases.map(([d]) => d), JSON.stringify(example)];
    const run = spawnSync('python3', ['-c', script], { input: inputs.join('\n') + '\n', encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.split('\n').slice(0, -1)).toEqual([...cases.map(([, l]) => canonicalJson(JSON.parse(l) as JsonObject)), canonicalJson(skeletonLinks(example))]);
  });

  it('says how many fields are hashed, and its table and Python verifier list exactly those', () => {
    expect(doc).toContain(`The hash covers exactly these ${HASHED_FIELDS.length} fields`);
    // Every field count the doc gives is one of the versions' (a stale count would be another).
    const counts = new Set([HASHED_FIELDS.length, HASHED_FIELDS_V2.length, HASHED_FIELDS_V3.length, HASHED_FIELDS_V4.length].map(String));
    expect([...doc.matchAll(/\b(\d+) (?:of section \d+|fields)\b/g)].map((m) => m[1]).filter((n) => !counts.has(n as string))).toEqual([]);
    const section2 = doc.slice(doc.indexOf('## 2. The entry body'), doc.indexOf('## 3.'));
    const tableFields = [...section2.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]);
    expect(tableFields).toEqual([...HASHED_FIELDS]);
    const python = /HASHED_FIELDS = \[([\s\S]*?)\]/.exec(doc)?.[1] ?? '';
    expect([...python.matchAll(/"(\w+)"/g)].map((m) => m[1])).toEqual([...HASHED_FIELDS]);
    // The example parses numbers as doubles, as the service hashes them.
    expect(doc).toContain('json.loads(entry_json, parse_int=float)');
  });

  it('documents where the signature is checked (the stored hash), as verify-bundle does', () => {
    expect(doc).toContain('The signature is always checked over the stored `hash`');
  });

  it('gives a key transition whose statement and both signatures recompute', () => {
    const statement = `${block('example-transition')}\n`;
    const [oldSig, newSig] = block('example-transition-signatures').split('\n');
    const key2 = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from('4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb', 'hex')]), format: 'der', type: 'pkcs8' });
    const t = signKeyTransition({ custody: memoryCustody(rfc8032Key()), raw: rawPublicKey(publicKey) }, { custody: memoryCustody(key2), raw: rawPublicKey(createPublicKey(key2)) }, '2026-03-02T00:00:00.000Z');
    expect(t.statement).toBe(statement);
    expect(t.old_signature).toBe(oldSig);
    expect(t.new_signature).toBe(newSig);
    expect('newKey' in verifyKeyTransition(t, rawKey)).toBe(true);
    // Endorsed by another key, or with a changed line: refused.
    expect(verifyKeyTransition(t, rawPublicKey(createPublicKey(key2)))).toMatchObject({ failure: expect.stringContaining('not the trusted key') });
    expect(verifyKeyTransition({ ...t, created_at: '2026-03-03T00:00:00.000Z' }, rawKey)).toMatchObject({ failure: expect.stringContaining('does not say') });
    expect(verifyKeyTransition({ ...t, new_signature: t.old_signature }, rawKey)).toMatchObject({ failure: expect.stringContaining('new key') });
  });

  it('detects a one-character change to the example', () => {
    const e0 = structuredClone(entries[0]) as LedgerEntry;
    e0.data = { ...e0.data, amount: 42.6 };
    expect(entryHash(e0)).not.toBe(e0.hash);
    expect(verifyEntrySignature(rawKey, 'b' + e0.hash.slice(1), e0.signature)).toBe(false);
  });

  it('decodes the encoding examples of section 13 exactly as the core does: the good ones to their bytes, the bad ones refused', () => {
    const lines = block('example-encodings').split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(16);
    for (const line of lines) {
      const m = /^(hex|base64) ("[^"]*"|\S+) (\S+)$/.exec(line);
      if (!m) throw new Error(`unreadable example line: ${line}`);
      const [, kind, quoted, want] = m as unknown as [string, 'hex' | 'base64', string, string];
      const text = quoted.startsWith('"') ? quoted.slice(1, -1) : quoted;
      const decode = () => toHex(kind === 'hex' ? fromHex(text) : fromBase64(text));
      if (want === 'refused') expect(decode, line).toThrow();
      else expect(decode(), line).toBe(want);
    }
  });
});
