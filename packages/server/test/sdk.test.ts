// @audit-ledger/sdk against the real service as a child process, on both stores: batching by size
// and time, retries that honour Retry-After and never duplicate, refused items reported while the
// rest go through, exactly-once delivery through a kill -9 and restart of the service, typed
// reads, and local verification of receipts with the pinned key.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { checkpointText, fromHex, parseCheckpointText, parseNote, toHex } from '@audit-ledger/core';
import { type AuditEvent, CheckpointWatcher, createClient, type LedgerEntry, type Problem, type SignedCheckpoint, verifyInclusion, verifyReceipt } from '@audit-ledger/sdk';
import { rawPublicKey, signNote } from '../src/crypto/signing.js';
import { memoryCustody } from '../src/crypto/custody.js';
import { STORE_KINDS } from './helpers/env.js';
import { createTestDatabase, type TestDatabase } from './helpers/stores.js';
import { BOOTSTRAP, bootstrapKey, killLeftovers, type Service, startService } from './fault/harness.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

describe.each(STORE_KINDS)('the SDK against the service on %s', (kind) => {
  let db: TestDatabase;
  let svc: Service;
  let env: Record<string, string>;
  let key: string;
  let baseUrl: string;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
    const port = await freePort();
    env = { LEDGER_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}), ...BOOTSTRAP, PORT: String(port), CHECKPOINT_INTERVAL_MS: '100' };
    svc = await startService(env);
    key = await bootstrapKey(svc.url);
    baseUrl = `${svc.url}/api/v1`;
  }, 120_000);
  afterAll(async () => {
    killLeftovers();
    await db?.drop();
  });

  const readTrace = async (trace: string): Promise<LedgerEntry[]> => {
    const out: LedgerEntry[] = [];
    for await (const e of createClient({ baseUrl, apiKey: key }).search({ trace_id: trace })) out.push(e);
    return out;
  };
  const eventIds = (entries: LedgerEntry[]) => entries.map((e) => e.event_id);
  const events = (trace: string, n: number, from = 0): AuditEvent[] => Array.from({ length: n }, (_, i) => ({ event_type: 'tool.called', trace_id: trace, data: { i: from + i, tool: 'search' } }));

  it('sends batches by size and by time, and delivers every event once', async () => {
    let requests = 0;
    const counting: typeof fetch = (input, init) => {
      if (String(input).endsWith('/logs/batch')) requests++;
      return fetch(input, init);
    };
    const client = createClient({ baseUrl, apiKey: key, batchSize: 50, flushIntervalMs: 20, fetch: counting });
    const trace = randomUUID();
    for (const e of events(trace, 120)) await client.log(e);
    await client.flush();
    expect(requests).toBe(3); // 50, 50, 20
    // By time: one event, no flush, goes out on its own.
    await client.log({ event_type: 'tool.called', trace_id: trace, data: { alone: true } });
    await vi.waitFor(() => expect(client.stats().sent).toBe(121), { timeout: 10_000, interval: 10 });
    await client.close();
    const stored = await readTrace(trace);
    expect(stored).toHaveLength(121);
    expect(new Set(eventIds(stored)).size).toBe(121);
  });

  it('19: close() waits for every log() already called (not awaited), with and without an agent signer and a spool; a log() after close() throws', async () => {
    const { fileSpool } = await import('@audit-ledger/sdk/node');
    const { agentSigner } = await import('@audit-ledger/sdk');
    for (const signed of [false, true]) {
      for (const spooled of [false, true]) {
        const sent: string[] = [];
        const recording: typeof fetch = async (url, init) => {
          if (typeof init?.body === 'string') sent.push(init.body);
          return fetch(url, init);
        };
        const dir = spooled ? fs.mkdtempSync(path.join(db.dataDir, 'spool-')) : undefined;
        const client = createClient({
          baseUrl,
          apiKey: key,
          fetch: recording,
          ...(dir ? { spool: fileSpool(dir) } : {}),
          ...(signed ? { agentSigner: await agentSigner(`closer-${randomUUID()}`, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()) } : {}),
          onError: () => undefined,
        });
        const trace = randomUUID();
        const eventId = randomUUID();
        // As most callers write it: not awaited, then close().
        void client.log({ event_type: 'last.words', trace_id: trace, event_id: eventId, data: { signed, spooled } });
        const { unsent } = await client.close();
        expect(unsent, `signed ${signed}, spooled ${spooled}`).toEqual([]);
        expect(sent.some((b) => b.includes(eventId)), `signed ${signed}, spooled ${spooled}: the event was sent`).toBe(true);
        // Unsigned, it is committed (a signed one by an unregistered agent key is refused by the service and reported to onError).
        if (!signed) expect(eventIds(await readTrace(trace))).toEqual([eventId]);
        await expect(client.log({ event_type: 'too.late', data: {} })).rejects.toThrow('the client is closed');
      }
    }
  });

  it('retries a 503 after the Retry-After it names, and the retried batch appends nothing twice', async () => {
    const delays: number[] = [];
    let calls = 0;
    // The first request reaches the service and commits, but the client is told 503 (a proxy timing out, say).
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (String(input).endsWith('/logs/batch') && ++calls === 1) {
        await res.body?.cancel();
        return new Response(JSON.stringify({ status: 503, code: 'service_unavailable' }), { status: 503, headers: { 'retry-after': '2' } });
      }
      return res;
    };
    const client = createClient({ baseUrl, apiKey: key, batchSize: 100, fetch: lossy, sleep: async (ms) => void delays.push(ms) });
    const trace = randomUUID();
    for (const e of events(trace, 30)) await client.log(e);
    await client.close();
    expect(delays).toEqual([2000]);
    expect(client.stats()).toMatchObject({ sent: 30, retries: 1, failed: 0 });
    const stored = await readTrace(trace);
    expect(stored).toHaveLength(30);
  });

  it('splits a batch the service finds too large (413) and sends the halves', async () => {
    const sizes: number[] = [];
    const counting: typeof fetch = (input, init) => {
      if (String(input).endsWith('/logs/batch')) sizes.push((JSON.parse(String(init?.body)) as { logs: unknown[] }).logs.length);
      return fetch(input, init);
    };
    const client = createClient({ baseUrl, apiKey: key, batchSize: 1200, fetch: counting });
    const trace = randomUUID();
    for (const e of events(trace, 1200)) await client.log(e);
    await client.close();
    expect(sizes).toEqual([1200, 600, 600]); // the service takes at most MAX_BATCH_SIZE (1000)
    expect(await readTrace(trace)).toHaveLength(1200);
  });

  it('reports the items the service refuses, with its problem, and delivers the rest of the batch', async () => {
    const refused: Array<{ event: AuditEvent; problem: Problem }> = [];
    const client = createClient({ baseUrl, apiKey: key, onError: (event, problem) => refused.push({ event, problem }) });
    const trace = randomUUID();
    const batch = events(trace, 5);
    (batch[2] as AuditEvent).timestamp = 'yesterday';
    for (const e of batch) await client.log(e);
    await client.close();
    expect(refused).toHaveLength(1);
    expect(refused[0]?.event.data).toEqual({ i: 2, tool: 'search' });
    expect(refused[0]?.problem).toMatchObject({ status: 400, code: 'validation_failed' });
    expect((await readTrace(trace)).map((e) => (e.data as { i: number }).i)).toEqual([0, 1, 3, 4]);
    expect(client.stats()).toMatchObject({ sent: 4, failed: 1 });
  });

  it('delivers every event exactly once through a kill -9 and restart of the service', async () => {
    const client = createClient({ baseUrl, apiKey: key, batchSize: 20, flushIntervalMs: 5, retryBaseMs: 20, retryMaxMs: 300 });
    const trace = randomUUID();
    const all = events(trace, 400);
    for (const e of all.slice(0, 200)) await client.log(e);
    await vi.waitFor(() => expect(client.stats().sent).toBeGreaterThanOrEqual(60), { timeout: 30_000, interval: 5 });
    await svc.kill9();
    for (const e of all.slice(200)) await client.log(e); // queued while the service is down
    svc = await startService(env);
    await client.close();
    const stored = await readTrace(trace);
    expect(stored).toHaveLength(400);
    expect(new Set(eventIds(stored)).size).toBe(400);
    // It did go through the outage: requests to the dead service failed and were retried.
    expect(client.stats()).toMatchObject({ failed: 0, sent: 400 });
    expect(client.stats().retries).toBeGreaterThan(0);
  }, 120_000);

  it('reads entries back and verifies a receipt locally with the pinned key; a changed entry fails', async () => {
    const client = createClient({ baseUrl, apiKey: key });
    const trace = randomUUID();
    await client.log({ event_type: 'decision.made', trace_id: trace, data: { decision: 'approve' } });
    await client.close();
    const [listed] = await readTrace(trace);
    const entry = await client.getLog((listed as LedgerEntry).log_id);
    const keys = await (await fetch(`${baseUrl}/integrity/keys`)).text();
    expect(verifyReceipt(entry, { publicKeys: keys })).toEqual({ ok: true, failures: [], problems: [] });
    // Each failure has a stable code to match (the console does), and its words.
    const changed = verifyReceipt({ ...entry, data: { decision: 'reject' } }, { publicKeys: keys });
    expect(changed.ok).toBe(false);
    expect(changed.failures.map((f) => f.code)).toEqual(['content_mismatch']);
    expect(changed.problems[0]).toContain('content does not match its commitment');
    expect(verifyReceipt({ ...entry, event_type: 'other' }, { publicKeys: keys }).failures.map((f) => f.code)).toEqual(['hash_mismatch']); // the signature is over the stored hash, which still holds
    expect(verifyReceipt(entry, { publicKeys: [] }).failures).toEqual([{ code: 'unknown_key', message: `key ${entry.key_id} is not one of the pinned keys` }]);
    expect((await client.verifyLog(entry.log_id)).chain_valid).toBe(true);
  });

  it('typed reads (types generated from the OpenAPI document): a replay and its analyses, a HITL rejection, an evidence bundle, a streamed export', async () => {
    const client = createClient({ baseUrl, apiKey: key, flushIntervalMs: 5 });
    const trace = randomUUID();
    const decisionId = randomUUID();
    await client.log({ event_type: 'context.retrieved', trace_id: trace, event_id: 'read-1', timestamp: '2026-03-01T09:20:31.000Z', data: { source_id: 'feed:NASDAQ:ACME', source_type: 'market_feed', as_of: '2026-03-01T09:20:01.000Z', max_age_seconds: 30 } });
    await client.log({ event_type: 'decision.made', trace_id: trace, timestamp: '2026-03-01T09:21:15.000Z', data: { decision_id: decisionId, decision: 'buy', inputs: ['read-1'] } });
    await client.flush();
    const session = await client.replay(trace, { ticket: 'INC-2291' });
    expect(session).toMatchObject({ trace_id: trace, event_count: 2, metadata: { ticket: 'INC-2291' } });
    const [timeline, graph, staleness, rc] = await Promise.all([client.timeline(session.id), client.causalGraph(session.id), client.staleness(session.id), client.rootCause(session.id)]);
    expect(timeline.items.map((i) => i.event_type)).toEqual(['context.retrieved', 'decision.made']);
    expect(graph.edges.map((e) => e.type)).toContain('decided_on');
    expect(staleness.findings.map((f) => f.source_id)).toEqual(['feed:NASDAQ:ACME']);
    expect(rc).toMatchObject({ root_cause_type: 'STALE_CONTEXT', detected: true });
    const rejection = await client.rejectDecision({ reviewer: 'maria.gonzalez@acme.example', rejection_reason: 'feed 74 s old', decision_id: decisionId });
    expect(rejection).toMatchObject({ trace_id: trace, decision_id: decisionId });
    // The bundle covers what a checkpoint covers (one is signed within CHECKPOINT_INTERVAL_MS).
    const bundle = await vi.waitFor(
      async () => {
        const b = await client.evidence({ trace_id: trace });
        expect(b.entries).toHaveLength(3);
        return b;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(bundle.entries.map((e) => (e.entry as { event_type: string }).event_type)).toEqual(['context.retrieved', 'decision.made', 'hitl.rejected']);
    const exported: LedgerEntry[] = [];
    for await (const e of client.exportEntries({ trace_id: trace })) exported.push(e);
    expect(exported.map((e) => e.event_type)).toEqual(['context.retrieved', 'decision.made', 'hitl.rejected']);
    expect(exported.every((e) => e.content_hash === e.hash)).toBe(true);
    const csv = await new Response(await client.exportStream({ format: 'csv', trace_id: trace })).text();
    expect(csv.trim().split('\r\n')).toHaveLength(4);
    await client.close();
  });

  it('watches checkpoints: accepts a growing, consistent history; catches a forked root, a rewritten past and a foreign signer', async () => {
    const client = createClient({ baseUrl, apiKey: key, flushIntervalMs: 5 });
    const keys = await (await fetch(`${baseUrl}/integrity/keys`)).text();
    const grow = async () => {
      const before = (await client.checkpoint()).tree_size;
      for (const e of events(randomUUID(), 3)) await client.log(e);
      await client.flush();
      await vi.waitFor(async () => expect((await client.checkpoint()).tree_size).toBeGreaterThan(before), { timeout: 10_000, interval: 20 });
    };
    await grow();
    const watcher = client.watchCheckpoints({ publicKeys: keys });
    const first = await watcher.check();
    expect(first).toMatchObject({ ok: true, problems: [], previous: undefined });
    await grow();
    const second = await watcher.check();
    expect(second).toMatchObject({ ok: true, problems: [] });
    expect(second.checkpoint.tree_size).toBeGreaterThan(first.checkpoint.tree_size);

    // The service's own key, as a misbehaving operator would use it, signs a different root.
    const keyFile = path.join(db.dataDir, 'signing-key.pem');
    const privateKey = createPrivateKey(fs.readFileSync(keyFile, 'utf8'));
    const raw = rawPublicKey(createPublicKey(privateKey));
    const forge = (cp: SignedCheckpoint, signer = privateKey, signerRaw = raw): SignedCheckpoint => {
      const name = (parseNote(cp.note).signatures[0] as { name: string }).name;
      const text = parseCheckpointText(parseNote(cp.note).text);
      const rootHash = new Uint8Array(randomBytes(32));
      return { ...cp, root_hash: toHex(rootHash), note: signNote(checkpointText({ ...text, rootHash }), name, memoryCustody(signer), signerRaw) };
    };
    const serving = (cp: SignedCheckpoint) => ({ checkpoint: async () => cp, consistency: (a: number, b: number) => client.consistency(a, b) });
    const forks: string[][] = [];
    const onFork = (v: { problems: string[] }) => void forks.push(v.problems);

    // A second root for the size already accepted: a split view.
    const split = await new CheckpointWatcher(serving(forge(second.checkpoint)), { publicKeys: keys, trusted: second.checkpoint, onFork }).check();
    expect(split.ok).toBe(false);
    expect(split.problems[0]).toContain('two different roots');
    // The past rewritten: what the watcher accepted earlier is not a prefix of what the service now proves.
    const rewritten = await new CheckpointWatcher(serving(second.checkpoint), { publicKeys: keys, trusted: forge(first.checkpoint), onFork }).check();
    expect(rewritten.ok).toBe(false);
    expect(rewritten.problems[0]).toContain('not consistent');
    // Signed by a key nobody pinned.
    const other = generateKeyPairSync('ed25519');
    const foreign = await new CheckpointWatcher(serving(forge(second.checkpoint, other.privateKey, rawPublicKey(other.publicKey))), { publicKeys: keys, onFork }).check();
    expect(foreign.problems).toEqual([expect.stringMatching(new RegExp(`^checkpoint at tree size ${second.checkpoint.tree_size}: checkpoint signature does not verify with any trusted key`))]);
    expect(forks).toHaveLength(3);
    expect(watcher.latest).toEqual(second.checkpoint); // a failing checkpoint is never accepted

    // An inclusion proof, checked locally against the signed checkpoint.
    let entry: LedgerEntry | undefined;
    for await (const e of client.search({ limit: 1 })) {
      entry = e; // seq 0, under every checkpoint
      break;
    }
    const proof = await client.proof((entry as LedgerEntry).log_id);
    expect(verifyInclusion(entry as LedgerEntry, proof, proof.checkpoint as SignedCheckpoint, { publicKeys: keys })).toEqual({ ok: true, problems: [] });
    const bent = { ...proof, proof: proof.proof.map((h, i) => (i === 0 ? toHex(fromHex(h).map((b) => b ^ 1)) : h)) };
    expect(verifyInclusion(entry as LedgerEntry, bent, proof.checkpoint as SignedCheckpoint, { publicKeys: keys }).ok).toBe(proof.proof.length === 0);
  });
});

describe('closing the SDK while the service is unreachable', () => {
  it('close({ deadlineMs }) gives up at the deadline and returns what was not committed; with a spool it stays there for the next client', async () => {
    const { fileSpool } = await import('@audit-ledger/sdk/node');
    const port = await freePort(); // nothing listens there
    const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'al-close-'));
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}/api/v1`, apiKey: 'alk_x', spool: fileSpool(dir), flushIntervalMs: 1, retryBaseMs: 5, retryMaxMs: 20 });
    for (let i = 0; i < 3; i++) await client.log({ event_type: 'tool.called', data: { i } });
    const { unsent } = await client.close({ deadlineMs: 200 });
    expect(unsent.map((e) => e.data)).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    await expect(client.log({ event_type: 'late', data: {} })).rejects.toThrow('closed');
    // The next client on the same spool has them, in order, with the same ids and keys.
    const next = createClient({ baseUrl: `http://127.0.0.1:${port}/api/v1`, apiKey: 'alk_x', spool: fileSpool(dir), flushIntervalMs: 1, retryBaseMs: 5, retryMaxMs: 20 });
    const again = await next.close({ deadlineMs: 100 });
    expect(again.unsent.map((e) => [e.event_id, e.idempotency_key])).toEqual(unsent.map((e) => [e.event_id, e.idempotency_key]));
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
