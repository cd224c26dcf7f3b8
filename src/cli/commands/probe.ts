// `probe fsync`: etcd's fio disk test, in-process, on any directory.
import { runFsyncProbe, DEFAULT_BLOCK_SIZE, DEFAULT_SIZE_BYTES, type FsyncProbeResult } from '../../probe/fsync.ts';
import { hang } from '../../text/wrap.ts';
import { terminalJson, terminalSafe } from '../../text/terminal.ts';
import { EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, PIPE_COLUMNS, UsageError, oneOf, parseFlags, terminalWidth, type Io } from '../io.ts';
import { progressOnTerminal } from '../progress.ts';

export const PROBE_USAGE = `Usage: node-tuning-advisor probe fsync --dir DIR [flags]

Times fdatasync the way etcd's WAL and fio's etcd test do (fio --rw=write --ioengine=sync
--fdatasync=1 --size=22m --bs=2300): sequential writes into a preallocated file, one fdatasync
after each, only the fdatasync timed. The file is removed afterwards (also on Ctrl-C, SIGTERM or a
dropped session's SIGHUP). Point --dir at etcd's data dir (next to member/) or another directory on
the same filesystem. The directory must be one no other user can change (owned by root or you;
writable by others only with the sticky bit): the file is created new and written through one
descriptor, never reopened by name.

Flags:
  --dir DIR            directory to probe (required)
  --size SIZE          bytes to write: 22MiB (default), 512KiB, 1G, 23068672 …
  --block-size BYTES   bytes per write (default ${DEFAULT_BLOCK_SIZE})
  --output FORMAT      text (default) or json
  -h, --help           this help

Exit codes: 0 measured; 1 the probe could not run (full or read-only filesystem, no permission …);
2 bad flags (unknown flag, bad size, a --dir that does not exist, is not a directory or others may change).
`;

/** A --dir or --size the user must change (missing, not a directory, others may write there, inside member/): exit 2. */
const BAD_INPUT_CODES = new Set(['ENOENT', 'ENOTDIR', 'EUNSAFE', 'EINVAL']);

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** "22MiB", "22m", "22M", "512KiB", "1G", "23068672" → bytes (binary units, as fio's defaults). */
export function parseSize(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?\s*$/i.exec(text);
  if (!match) return undefined;
  const bytes = Number(match[1]) * (UNITS[(match[2] as string).toLowerCase()] as number);
  return Number.isSafeInteger(Math.round(bytes)) && bytes > 0 ? Math.round(bytes) : undefined;
}

type ProbeIo = Pick<Io, 'stdout' | 'stderr'> & Partial<Pick<Io, 'env'>>;

/** The result in lines that fit `width` (wrapped under their indent). */
export function formatProbeText(result: FsyncProbeResult, width = PIPE_COLUMNS): string {
  const fit = (indent: string, text: string) => hang(indent, text, width, indent.length + 2);
  if (!result.ok) return `${fit('', `fsync probe in ${result.dir} failed (${result.code}): ${result.reason}`).join('\n')}\n`;
  const same = result.sameDeviceAsEtcd === null ? '' : result.sameDeviceAsEtcd ? ', same device as etcd' : ', NOT etcd\'s device';
  return [
    ...fit('', `fsync probe in ${result.dir} (device ${result.device}${same}; preallocated with ${result.preallocation})`),
    ...fit('  ', `${result.samples} × (write ${result.blockSize} B + fdatasync), ${result.bytesWritten} bytes in ${Math.round(result.wallMs)} ms`),
    ...fit('  ', `fdatasync p50 ${result.p50Ms} ms · p90 ${result.p90Ms} ms · p99 ${result.p99Ms} ms · p99.9 ${result.p999Ms} ms · max ${result.maxMs} ms`),
    ...fit('  ', `etcd wants p99 < 10 ms: ${result.p99Ms < 10 ? 'pass' : 'FAIL'}`),
    '',
  ].join('\n');
}

export async function probeCommand(args: string[], io: ProbeIo): Promise<number> {
  const [kind, ...rest] = args;
  if (kind === undefined || kind === '--help' || kind === '-h') {
    io.stdout.write(PROBE_USAGE);
    return kind === undefined ? EXIT_INPUT : EXIT_OK;
  }
  if (kind !== 'fsync') throw new UsageError(`unknown probe "${kind}"; the probe available is: fsync`);
  const { values } = parseFlags(
    rest,
    { dir: { type: 'string' }, size: { type: 'string' }, 'block-size': { type: 'string' }, output: { type: 'string', short: 'o' } },
    'probe fsync',
  );
  if (values.help) {
    io.stdout.write(PROBE_USAGE);
    return EXIT_OK;
  }
  const output = oneOf('--output', values.output, ['text', 'json'] as const, 'text');
  if (!values.dir) throw new UsageError('--dir is required: the directory to probe (etcd\'s data dir, e.g. /var/lib/etcd)');
  const sizeBytes = values.size === undefined ? DEFAULT_SIZE_BYTES : parseSize(values.size);
  if (sizeBytes === undefined) throw new UsageError(`--size "${values.size}" is not a size (examples: 22MiB, 512KiB, 23068672)`);
  const blockSize = values['block-size'] === undefined ? DEFAULT_BLOCK_SIZE : Number(values['block-size']);
  if (!Number.isInteger(blockSize) || blockSize <= 0) throw new UsageError(`--block-size "${values['block-size']}" must be a positive whole number of bytes`);
  const progress = progressOnTerminal(io, 'fsync probe');
  const result = await runFsyncProbe({ dir: values.dir, sizeBytes, blockSize, ...(progress ? { onProgress: progress.onProgress } : {}) });
  progress?.finish();
  const width = terminalWidth({ ...io, env: io.env ?? {} });
  if (output === 'json') io.stdout.write(`${terminalJson(result)}\n`);
  else if (result.ok) io.stdout.write(formatProbeText(terminalSafe(result), width));
  if (!result.ok) {
    io.stderr.write(formatProbeText(terminalSafe(result), width));
    return BAD_INPUT_CODES.has(result.code) ? EXIT_INPUT : EXIT_FINDINGS;
  }
  return EXIT_OK;
}
