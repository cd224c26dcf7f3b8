// `cleanup` (`kubectl node-tuning cleanup`): removes every annotation, label and heartbeat the agents
// wrote (src/cluster/cleanup.ts), for kustomize installs after `kubectl delete -k`; the Helm chart's
// pre-delete hook runs it with --revoke-agent-access while the agents still run.
import { cleanup, type CleanupResult } from '../../cluster/cleanup.ts';
import { TokenBucket } from '../../kube/backoff.ts';
import { spaced } from '../../cluster/fleet.ts';
import { EXIT_FINDINGS, EXIT_OK, numberFlag, parseFlags, type Io } from '../io.ts';
import { AGENT_NAMESPACE_FLAG, AGENT_NAMESPACE_USAGE, KUBE_FLAGS, KUBE_FLAGS_USAGE, clusterApiFrom, namespaceFlag } from '../kube-flags.ts';

const DEFAULT_QPS = 20;

export const CLEANUP_USAGE = `Usage: node-tuning-advisor cleanup [flags]

Removes what the agents wrote, and nothing else: every annotation under node-tuning-advisor.io/
and the labels node-tuning-advisor.io/grade and node-tuning-advisor.io/critical-failing on every
Node, and the agents' heartbeat Leases (labelled node-tuning-advisor.io/heartbeat) in their
namespace. Run it after the agents are gone (kubectl delete -k manifests/); helm uninstall runs it
by itself. Running it again changes nothing. Events the agents created are left to expire
(kube-apiserver's --event-ttl, 1 h by default); the operator's silence.node-tuning-advisor.io/rules
annotation stays.

Flags:
${KUBE_FLAGS_USAGE}${AGENT_NAMESPACE_USAGE}  --revoke-agent-access  first delete the agents' bindings (ClusterRoleBinding node-tuning-advisor,
                         RoleBinding node-tuning-advisor-heartbeat in --agent-namespace), so
                         agents still running cannot write again: what helm uninstall's hook does
  --dry-run              count what would be removed; write nothing
  --qps N                requests per second at most (default ${DEFAULT_QPS})
  -h, --help             this help

Requests: LIST nodes (metadata, paged), one merge PATCH per Node that carries our keys, LIST and
one delete-collection of the heartbeat Leases. Needs list and patch on nodes, list and
deletecollection on leases in --agent-namespace.
Exit codes: 0 removed (or nothing to remove); 1 some could not be removed (named); 2 bad flags,
kubeconfig or no access.
`;

export async function cleanupCommand(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(args, {
    ...KUBE_FLAGS, ...AGENT_NAMESPACE_FLAG,
    'revoke-agent-access': { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    qps: { type: 'string' },
  }, 'cleanup');
  if (values.help) {
    io.stdout.write(CLEANUP_USAGE);
    return EXIT_OK;
  }
  const agentNamespace = namespaceFlag('--agent-namespace', values['agent-namespace']);
  const qps = numberFlag('--qps', values.qps, DEFAULT_QPS, 0.1, 1000);
  const dryRun = values['dry-run'] === true;
  const api = clusterApiFrom(values, io.env, { limiter: new TokenBucket(qps, Math.max(1, Math.ceil(2 * qps))) });
  let result: CleanupResult;
  try {
    result = await cleanup(api, { agentNamespace, revokeAgentAccess: values['revoke-agent-access'] === true, dryRun });
  } finally {
    await api.close();
  }
  io.stdout.write(summaryLines(result, agentNamespace, dryRun).join('\n') + '\n');
  return result.failureCount > 0 ? EXIT_FINDINGS : EXIT_OK;
}

/** What was removed (or would be), what was revoked, what failed. */
export function summaryLines(result: CleanupResult, namespace: string, dryRun: boolean): string[] {
  const verb = dryRun ? 'would remove' : 'removed';
  const lines = result.revoked.length > 0 ? [`cleanup: revoked the agents' write access (${result.revoked.join(', ')} deleted)`] : [];
  const nodes = `${spaced(result.nodesCleaned)} of ${spaced(result.nodesListed)} ${result.nodesListed === 1 ? 'node' : 'nodes'}`;
  if (result.nodesCleaned === 0 && result.leases === 0) lines.push(`cleanup: nothing to remove (${spaced(result.nodesListed)} nodes carry no node-tuning-advisor.io/ key; no heartbeat Lease in ${namespace})`);
  else {
    lines.push(`cleanup: ${verb} ${spaced(result.annotations)} annotations and ${spaced(result.labels)} labels under node-tuning-advisor.io/ from ${nodes}, `
      + `and ${spaced(result.leases)} heartbeat ${result.leases === 1 ? 'Lease' : 'Leases'} in ${namespace}`);
  }
  for (const failure of result.failures) lines.push(`cleanup: failed: ${failure}`);
  if (result.failureCount > result.failures.length) lines.push(`cleanup: and ${spaced(result.failureCount - result.failures.length)} more failures`);
  lines.push('cleanup: the agents\' Events are left to expire (kube-apiserver --event-ttl, 1 h by default)');
  return lines;
}
