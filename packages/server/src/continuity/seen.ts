// The checkpoints the outside world has seen of each company's log, which a restored ledger must
// not be behind: checkpoint files the operator gives (a signed note as GET …/checkpoint serves it,
// a JSON answer or bundle that holds one, or `audit-ledger monitor`'s state file), and what each
// configured witness (C2SP tlog-witness) says it has cosigned. A note's signature is checked by
// the restore (core's ExportVerifier); a size alone (a witness's answer) can only be compared.
import fs from 'node:fs';
import { parseCheckpointText, parseNote } from '@audit-ledger/core';
import { MAX_WITNESS_ANSWER_BYTES, readBounded } from '../egress/bounded.js';
import type { OperatorFetch } from '../egress/address-policy.js';

export interface SeenCheckpoint {
  companyId: string;
  size: number;
  /** The signed note, when the source had it (a witness's answer has only its size). */
  note?: string;
  /** Where it was seen, for the operator: a file's path, or `witness <name>`. */
  source: string;
  /** The source holds another history at this size (a witness that cosigned it with another root). */
  conflict?: string;
}

export class SeenFileError extends Error {
  override readonly name = 'SeenFileError';
}

/** Every signed note a checkpoint file holds, whatever the shape it came in. */
function notesIn(value: unknown, out: string[]): void {
  if (typeof value === 'string') {
    if (value.includes('\n\n')) out.push(value);
    return;
  }
  if (Array.isArray(value)) for (const v of value) notesIn(v, out);
  else if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.note === 'string') out.push(o.note);
    // An answer or bundle (checkpoint, checkpoints, items), or the monitor's state ({logs: {origin: state}}).
    for (const k of ['checkpoint', 'checkpoints', 'items']) notesIn(o[k], out);
    if (o.logs && typeof o.logs === 'object') notesIn(Object.values(o.logs), out);
  }
}

/** The checkpoints in an operator's file, for the companies of this service (the origin is `<LEDGER_ORIGIN>/<company_id>`). */
export function seenInFile(file: string, origin: string): SeenCheckpoint[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new SeenFileError(`checkpoint file ${file}: ${(err as Error).message}`);
  }
  const notes: string[] = [];
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      notesIn(JSON.parse(text), notes);
    } catch {
      throw new SeenFileError(`checkpoint file ${file}: starts like JSON but is not JSON`);
    }
  } else notes.push(text.endsWith('\n') ? text : `${text}\n`);
  if (notes.length === 0) throw new SeenFileError(`checkpoint file ${file}: no signed checkpoint note in it`);
  const seen: SeenCheckpoint[] = [];
  for (const note of notes) {
    let c;
    try {
      c = parseCheckpointText(parseNote(note).text);
    } catch (err) {
      throw new SeenFileError(`checkpoint file ${file}: ${(err as Error).message}`);
    }
    if (!c.origin.startsWith(`${origin}/`)) throw new SeenFileError(`checkpoint file ${file}: a checkpoint of ${c.origin}, not of this service's origin ${origin}`);
    seen.push({ companyId: c.origin.slice(origin.length + 1), size: c.treeSize, note, source: file });
  }
  return seen;
}

/**
 * The size a witness has cosigned of a company's log. The probe is the protocol's own request,
 * with the restored ledger's newest checkpoint as `old` and no proof: a witness at that size
 * cosigns it again (nothing new: it saw it before) and one at another size answers 409 with its
 * size (C2SP tlog-witness). Undefined when the witness does not answer so (it is reported).
 */
export async function witnessSize(send: OperatorFetch, witness: { url: string; name: string }, checkpoint: { tree_size: number; note: string }, timeoutMs = 10_000): Promise<{ size?: number; conflict?: string; problem?: string }> {
  let res: Response;
  try {
    res = await send(`${witness.url}/add-checkpoint`, { method: 'POST', body: `old ${checkpoint.tree_size}\n\n${checkpoint.note}`, headers: { 'content-type': 'text/plain' }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    return { problem: `no answer: ${(err as Error).message}` };
  }
  let text = '';
  try {
    text = await readBounded(res, MAX_WITNESS_ANSWER_BYTES);
  } catch (err) {
    return { problem: `${res.status}: ${(err as Error).message}` };
  }
  if (res.status === 200) return { size: checkpoint.tree_size };
  if (res.status === 409 && (res.headers.get('content-type') ?? '').startsWith('text/x.tlog.size')) {
    const size = Number(text.trim());
    if (Number.isSafeInteger(size) && size === checkpoint.tree_size) return { size, conflict: `it cosigned size ${size} with another root: the history it saw is not this one` };
    if (Number.isSafeInteger(size) && size >= 0) return { size };
  }
  return { problem: `${res.status}: ${text.trim().slice(0, 200)}` };
}
