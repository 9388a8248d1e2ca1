// The egress module's other half (address-policy.ts is the first): answers the service reads from
// other parties (witnesses, the Time Stamping Authority, log stream destinations, and the service itself for the CLI):
// every body is read up to a bound and the rest is never taken. A witness is someone else's
// server: one that answered 200 with 128 MB grew the process by 580 MB on every checkpoint round.
// (Webhook receivers' bodies are never read: delivery.ts cancels them.)

/** The most of a witness's answer the service reads: a cosignature is a line of about 150 bytes. */
export const MAX_WITNESS_ANSWER_BYTES = 64 * 1024;

export class AnswerTooLargeError extends Error {
  override readonly name = 'AnswerTooLargeError';
  constructor(readonly limit: number) {
    super(`the answer is larger than ${limit} bytes; the rest was not read`);
  }
}

/** The most of a Time Stamping Authority's answer the service reads: a token with its certificate chain is a few KB. */
export const MAX_TSA_ANSWER_BYTES = 256 * 1024;

/** The body as UTF-8 text, reading at most `maxBytes`; past that the stream is cancelled and AnswerTooLargeError thrown. */
export async function readBounded(res: Response, maxBytes: number): Promise<string> {
  return Buffer.from(await readBoundedBytes(res, maxBytes)).toString('utf8');
}

/** The body's bytes, reading at most `maxBytes` (as readBounded). */
export async function readBoundedBytes(res: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw new AnswerTooLargeError(maxBytes);
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new AnswerTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
