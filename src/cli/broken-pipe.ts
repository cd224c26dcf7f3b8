// A reader that stops early (`… | head`, `2>&1 | head`) closes the pipe under stdout or stderr; a
// terminal that hung up (a dropped SSH session) answers writes with EIO: the same, nobody reads.
// Most commands then end quietly at once, as other CLI tools do. A command with something to undo
// (measure's namespace and pods) registers a handler instead: it is told once, its later writes to
// the closed stream are dropped, and it exits when it has cleaned up.
const handlers = new Set<() => void>();
let told = false;

/** Until the returned function is called, a closed pipe calls `handler` (once) instead of exiting. */
export function onBrokenPipe(handler: () => void): () => void {
  handlers.add(handler);
  return () => { handlers.delete(handler); };
}

/** For the entry point: an EPIPE (or a hung-up terminal's EIO) on stdout or stderr. */
export function brokenPipe(exit: (code: number) => void = (code) => process.exit(code)): void {
  if (handlers.size === 0) return exit(process.exitCode === undefined ? 0 : Number(process.exitCode));
  if (told) return;
  told = true;
  for (const handler of [...handlers]) handler();
}

/** Listens on the process's stdout and stderr (the entry point does this once). */
export function endQuietlyOnBrokenPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'EIO' || error.code === 'ERR_STREAM_DESTROYED') return brokenPipe();
      throw error;
    });
  }
}
