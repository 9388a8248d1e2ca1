// The SDK's durable spool for Node ('@audit-ledger/sdk/node'): events are on disk before log()
// resolves and leave only after the service committed them, so a crash of the agent process loses
// nothing log() accepted. Two append-only files in `dir`: events.jsonl (one event per line, synced
// before log() resolves) and done.txt (ids of committed events, synced before they count as done).
// Loading returns what is not done and compacts both files; a torn last line (a write the crash
// cut, whose log() never resolved) is skipped.
import fs from 'node:fs';
import path from 'node:path';
import type { AuditEvent, Spool } from './client.js';

export { type Spool } from './client.js';

export function fileSpool(dir: string): Spool {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const eventsFile = path.join(dir, 'events.jsonl');
  const doneFile = path.join(dir, 'done.txt');
  let events: fs.promises.FileHandle | undefined;
  let done: fs.promises.FileHandle | undefined;
  let stored = 0;
  let removed = 0;
  // One operation at a time: appends, removals and compaction never interleave.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = chain.then(fn);
    chain = next.catch(() => undefined);
    return next;
  };
  const readLines = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : []);
  const syncDir = () => {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  };

  return {
    load: () =>
      serial(async () => {
        const doneIds = new Set(readLines(doneFile));
        const left: AuditEvent[] = [];
        for (const line of readLines(eventsFile)) {
          try {
            const e = JSON.parse(line) as AuditEvent;
            if (!doneIds.has(e.event_id as string)) left.push(e);
          } catch {
            // a torn line: its log() never resolved
          }
        }
        // Compact: what is left becomes the whole spool.
        const tmp = `${eventsFile}.tmp`;
        fs.writeFileSync(tmp, left.map((e) => `${JSON.stringify(e)}\n`).join(''), { mode: 0o600 });
        const fd = fs.openSync(tmp, 'r+');
        fs.fsyncSync(fd);
        fs.closeSync(fd);
        fs.renameSync(tmp, eventsFile);
        fs.writeFileSync(doneFile, '', { mode: 0o600 });
        syncDir();
        stored = left.length;
        removed = 0;
        return left;
      }),
    append: (event) =>
      serial(async () => {
        events ??= await fs.promises.open(eventsFile, 'a', 0o600);
        await events.write(`${JSON.stringify(event)}\n`);
        await events.datasync();
        stored++;
      }),
    remove: (ids) =>
      serial(async () => {
        if (ids.length === 0) return;
        done ??= await fs.promises.open(doneFile, 'a', 0o600);
        await done.write(ids.map((id) => `${id}\n`).join(''));
        await done.datasync();
        removed += ids.length;
        if (removed >= stored) {
          // Everything stored is done: start both files afresh.
          // By path: this process may never have appended (it only drained what another left).
          await fs.promises.truncate(eventsFile, 0);
          await done.truncate(0);
          stored = 0;
          removed = 0;
        }
      }),
  };
}
