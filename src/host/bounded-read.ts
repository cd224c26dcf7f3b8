// Reads of an opened host file that never take more than asked for.
import { type Stats } from 'node:fs';
import { type FileHandle } from 'node:fs/promises';

const CHUNK = 64 * 1024;

/**
 * Up to maxBytes from the start (one byte more is read to tell whether there was more). procfs and
 * sysfs report size 0 or 4096 whatever they hold, so the read goes on until EOF or the cap; a
 * regular file that holds a real size ends at it without a last empty read (what was appended
 * after the stat is not read: the file as it was checked).
 */
export async function readUpTo(handle: FileHandle, info: Stats, maxBytes: number): Promise<{ data: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total <= maxBytes) {
    const chunk = Buffer.alloc(Math.min(CHUNK, maxBytes + 1 - total));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) break;
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (info.size > 0 && total === info.size) break;
  }
  const data = Buffer.concat(chunks);
  const truncated = data.length > maxBytes;
  return { data: truncated ? data.subarray(0, maxBytes) : data, truncated };
}

/** The bytes from start to end (fewer when the file is shorter by now). */
export async function readRange(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  const data = Buffer.alloc(Math.max(0, end - start));
  let filled = 0;
  while (filled < data.length) {
    const { bytesRead } = await handle.read(data, filled, data.length - filled, start + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return data.subarray(0, filled);
}
