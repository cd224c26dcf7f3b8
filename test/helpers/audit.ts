// The real kube-apiserver's audit log as the tests' witness: what a client sent and what the server
// answered, never the client's own account. `auditArgs` gives the apiserver flags (the users named:
// their writes with the request body, everything else at Metadata level; nobody else; blocking
// writes, so an event is on disk when the response is);
// `AuditLog.requests()` reads the file back, one entry per request.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface AuditedRequest {
  auditID: string;
  verb: string;
  user: string;
  /** The request URI as sent (path and query). */
  uri: string;
  path: string;
  query: URLSearchParams;
  code: number;
  message: string;
  /** Completed (a watch that is still open has only ResponseStarted). */
  complete: boolean;
  /** When the server received it (ms since the epoch, microseconds as a fraction). */
  at: number;
  /** When its last stage was logged (the response complete, for a finished request). */
  done: number;
  /** The request body of a write (patch, create, update, delete). */
  body: unknown;
  /** The response body, for the reads of `responsesOf` resources (auditArgs). */
  response: unknown;
  userAgent: string;
}

export interface AuditConfig {
  args: string[];
  log: AuditLog;
}

/**
 * Writes the policy into `dir` and returns the apiserver flags plus a reader for the log.
 * `responsesOf`: core-group resources whose get/list responses are logged too (RequestResponse).
 */
export async function auditArgs(dir: string, users: string[], responsesOf: string[] = []): Promise<AuditConfig> {
  const policy = path.join(dir, 'audit-policy.yaml');
  const file = path.join(dir, 'audit.log');
  await writeFile(policy, [
    'apiVersion: audit.k8s.io/v1', 'kind: Policy', 'omitStages: [RequestReceived]', 'rules:',
    '  - level: Request', `    users: ${JSON.stringify(users)}`, '    verbs: [create, update, patch, delete, deletecollection]',
    ...(responsesOf.length > 0 ? ['  - level: RequestResponse', `    users: ${JSON.stringify(users)}`, '    verbs: [get, list]', `    resources: [{group: "", resources: ${JSON.stringify(responsesOf)}}]`] : []),
    '  - level: Metadata', `    users: ${JSON.stringify(users)}`, '  - level: None', '',
  ].join('\n'));
  await writeFile(file, '');
  return {
    args: [`--audit-policy-file=${policy}`, `--audit-log-path=${file}`, '--audit-log-mode=blocking', '--audit-log-format=json'],
    log: new AuditLog(file),
  };
}

export class AuditLog {
  readonly file: string;

  constructor(file: string) {
    this.file = file;
  }

  /** Every audited request, in the order received; a watch appears once (its last stage wins). */
  async requests(filter: (r: AuditedRequest) => boolean = () => true): Promise<AuditedRequest[]> {
    const text = await readFile(this.file, 'utf8').catch(() => '');
    const byId = new Map<string, AuditedRequest>();
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      let event: any;
      try { event = JSON.parse(line); } catch { continue; } // a line still being written
      const url = new URL(event.requestURI, 'https://apiserver');
      byId.set(event.auditID, {
        auditID: event.auditID,
        verb: event.verb,
        user: event.user?.username ?? '',
        uri: event.requestURI,
        path: url.pathname,
        query: url.searchParams,
        code: event.responseStatus?.code ?? 0,
        message: event.responseStatus?.message ?? '',
        complete: event.stage === 'ResponseComplete' || event.stage === 'Panic',
        at: preciseTime(event.requestReceivedTimestamp),
        done: preciseTime(event.stageTimestamp),
        userAgent: event.userAgent ?? '',
        body: event.requestObject,
        response: event.responseObject,
      });
    }
    return [...byId.values()].sort((a, b) => a.at - b.at).filter(filter);
  }
}

/** "2026-12-01T10:00:00.123456Z" → ms since the epoch, keeping the microseconds (Date.parse drops them). */
function preciseTime(stamp: string | undefined): number {
  const m = /\.(\d+)Z$/.exec(stamp ?? '');
  const whole = Date.parse((stamp ?? '').replace(/\.\d+Z$/, 'Z'));
  return m ? whole + Number(`0.${m[1]}`) * 1000 : whole;
}

export const isWrite = (r: AuditedRequest): boolean => !['get', 'list', 'watch'].includes(r.verb);

/** "PATCH nodes/node-a 200"-style lines for failure messages. */
export function describeRequests(requests: AuditedRequest[]): string {
  return requests.map((r) => `${new Date(r.at).toISOString()} ${r.verb} ${r.uri} ${r.code}${r.message ? ` ${r.message}` : ''}`).join('\n');
}
