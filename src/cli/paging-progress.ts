// `report`'s progress on stderr, only on a terminal: one line redrawn in place while lists are paged
// ("report: nodes · 2 500 read, page 5"), erased before the report prints; then one closing line
// with what the run cost the API server.
import type { ApiSummary } from '../cluster/report.ts';
import type { PageProgress } from '../cluster/api.ts';
import { spaced } from '../cluster/fleet.ts';
import type { Io } from './io.ts';
import { statusLine, type StatusLine, type TerminalStream } from '../text/status-line.ts';

export interface PagingProgress {
  page: (progress: PageProgress) => void;
  clear: () => void;
  done: (api: ApiSummary, elapsedMs: number) => void;
}


export function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

export function pageLine(p: PageProgress): string {
  return `report: ${p.resource} · ${spaced(p.items)} read, page ${p.pages}${p.restarted ? ' (restarted: continue token expired)' : ''}`;
}

export function costLine(api: ApiSummary, elapsedMs: number): string {
  const pages = api.pageSize > 0 ? `pages of ${api.pageSize}` : 'unpaged lists';
  const qps = api.qps !== undefined ? `, ≤ ${api.qps} requests/s` : '';
  return `report: ${api.requests} requests, ${describeBytes(api.bytesReceived)} received in ${(elapsedMs / 1000).toFixed(1)} s (${pages}${qps})`;
}

/** Undefined when stderr is not a terminal: nothing is drawn into logs or pipes. */
export function pagingProgress(io: Pick<Io, 'stderr'>): PagingProgress | undefined {
  const line = statusLine(io.stderr as TerminalStream);
  if (!line) return undefined;
  return {
    page: (p) => line.draw(pageLine(p)),
    clear: () => line.clear(),
    done: (api, elapsedMs) => line.above([line.fit(costLine(api, elapsedMs))]),
  };
}
