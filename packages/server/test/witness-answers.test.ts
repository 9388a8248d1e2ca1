// A witness is another party's server: the service reads at most MAX_WITNESS_ANSWER_BYTES of its
// answer. A witness answering 200 with 128 MB once grew the process by 580 MB every round.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WITNESS_ANSWER_BYTES } from '../src/egress/bounded.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ingestBatch, submitterTo } from './helpers/ledger.js';

describe('answers from witnesses are bounded', () => {
  let t: TestApp;
  let server: http.Server;
  let sent = 0;
  /** Resolves when the witness's answer ends: with how many of its chunks it wrote. */
  let ended: Promise<number>;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { env: { CHECKPOINT_INTERVAL_MS: '0' } });
    // 200, then 128 MB in 1 MiB chunks as fast as the connection takes them.
    server = http.createServer((req, res) => {
      let done: (n: number) => void = () => {};
      ended = new Promise((r) => (done = r));
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(1024 * 1024, 0x41);
      const total = 128;
      let i = 0;
      const pump = () => {
        while (i < total) {
          i++;
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => done(i));
      pump();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await t.close();
  });

  it('a 200 with 128 MB: read up to the bound, the connection dropped, the round recorded as failed', async () => {
    const acct = await t.newAccount();
    const { key } = await t.createKey(acct.token, 1_000_000);
    await ingestBatch(t, key, [{ event_type: 'step', data: {} }]);
    const submitter = submitterTo(t, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'hostile.example/w');
    await submitter.pass();
    const state = await t.store.witnessStore.state(acct.companyId, 'hostile.example/w');
    expect(state?.last_error).toContain(`larger than ${MAX_WITNESS_ANSWER_BYTES} bytes`);
    // The service hung up: the witness could not hand over its 128 MB (what it wrote is what the
    // sockets' buffers took, a few MB at most).
    expect(await ended).toBeLessThan(128);
    expect(sent).toBeLessThan(32 * 1024 * 1024);
  });
});
