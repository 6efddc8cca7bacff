// A gzipped import file (a remark42 backup, a Commento download; any format may come gzipped) read
// as the text it holds: the file's first bytes say whether it is gzip (1f 8b), and node:zlib's
// gunzip then expands it as a stream. What one file may make it do is bounded: a stream that ends
// early (a truncated download) or holds something that is not gzip fails at the compressed byte
// where it stopped, and one that expands more than MAX_RATIO times (past its first MiBs: a gzip
// bomb, no export is that repetitive) fails there too. A failure is thrown as a SourceFailure,
// which the import reports at its position and which writes nothing.
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { SourceFailure } from "./source.js";

/** expanded bytes per compressed byte past which a file is refused (JSON exports compress 5–30 times) */
export const MAX_RATIO = 256;
/** the expanded bytes read before the ratio is checked */
const RATIO_AFTER = 16 * 1024 * 1024;

export const isGzip = (head: Uint8Array) => head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;

const bytesOf = (chunk: Uint8Array | string): Uint8Array => (typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);

/** The input as it is, or expanded when it is gzip (its failures thrown as SourceFailure, at the compressed byte). */
export async function openInput(
  input: AsyncIterable<Uint8Array | string>,
): Promise<{ stream: AsyncIterable<Uint8Array | string>; gzip: boolean }> {
  const iterator = input[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) return { stream: (async function* () {})(), gzip: false };
  const head = bytesOf(first.value);
  const whole = (async function* () {
    yield head;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield bytesOf(next.value);
  })();
  return isGzip(head) ? { stream: gunzip(whole), gzip: true } : { stream: whole, gzip: false };
}

async function* gunzip(input: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let compressed = 0;
  let expanded = 0;
  const source = Readable.from(
    (async function* () {
      for await (const chunk of input) {
        compressed += chunk.byteLength;
        yield chunk;
      }
    })(),
  );
  const z = createGunzip();
  source.on("error", (err) => z.destroy(err));
  source.pipe(z);
  try {
    for await (const chunk of z as AsyncIterable<Buffer>) {
      expanded += chunk.byteLength;
      if (expanded > RATIO_AFTER && expanded > compressed * MAX_RATIO)
        throw new SourceFailure(
          `byte ${compressed} of the gzip file`,
          `the gzip file expands more than ${MAX_RATIO} times (${expanded} bytes from ${compressed}): refused`,
        );
      yield chunk;
    }
  } catch (err) {
    if (err instanceof SourceFailure) throw err;
    const code = (err as { code?: string }).code;
    const message =
      code === "Z_BUF_ERROR" ? "the gzip file ends early: it is truncated" : `not a whole gzip file: ${(err as Error).message}`;
    throw new SourceFailure(`byte ${compressed} of the gzip file`, message);
  } finally {
    source.destroy();
    z.destroy();
  }
}
