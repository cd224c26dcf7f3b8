// At start the agent proves that the admission policies hold its own token: RBAC lets it patch every
// Node and create Events and Leases, and only the ValidatingAdmissionPolicies narrow that to its own
// Node's annotations, its own Events and its own heartbeat. They match their ServiceAccount through
// their bindings' paramRef; an install that renamed the ServiceAccount without them (a hand edit, an
// old copy of the policies) would leave them matching nobody, the agent running on without a word and
// its token able to taint or relabel any Node. So for each policy the agent sends, as a server-side
// dry run (dryRun=All: authorized and admitted, never stored), one write that policy must refuse. A
// refusal by a policy is the proof; an acceptance means no policy holds it, and the agent does not start.
import { KubeError } from '../kube/errors.ts';
import type { KubeClient } from '../kube/client.ts';
import { EVENTS, LEASES, NODES } from '../kube/resources.ts';
import { REPORTING_COMPONENT } from '../wire/events.ts';
import { heartbeatLease, heartbeatSpec } from '../wire/heartbeat.ts';
import { ANNOTATION_PREFIX } from '../wire/annotations.ts';

export interface ServiceAccountId {
  namespace: string;
  name: string;
}

/** The ServiceAccount a bearer token belongs to (its JWT `sub`), or undefined for any other credential. */
export function serviceAccountOf(token: string | undefined): ServiceAccountId | undefined {
  const payload = token !== undefined && token.length <= 16 * 1024 ? token.split('.')[1] : undefined;
  if (payload === undefined) return undefined;
  let sub: unknown;
  try {
    sub = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown }).sub;
  } catch {
    return undefined;
  }
  const m = typeof sub === 'string' ? /^system:serviceaccount:([a-z0-9.-]{1,253}):([a-z0-9.-]{1,253})$/.exec(sub) : null;
  return m ? { namespace: m[1] as string, name: m[2] as string } : undefined;
}

/** One write a policy must refuse: what it is, and the dry run that sends it. */
interface Probe {
  policy: string;
  what: string;
  /** What the token could do without that policy. */
  risk: string;
  send(): Promise<unknown>;
}

export type AdmissionVerdict =
  | { held: true; lines: string[] }
  | { held: false; reason: string };

const FIX = 'The policies (manifests/base/admission-policy.yaml; the Helm chart\'s templates) hold the ServiceAccount their bindings name in spec.paramRef, '
  + 'which kustomize (namePrefix, nameSuffix, namespace) and Helm keep in step with it: apply them as shipped with the agent\'s objects, '
  + 'or point each binding\'s spec.paramRef at this ServiceAccount (kubectl edit validatingadmissionpolicybinding NAME)';

function probes(client: KubeClient, nodeName: string, account: ServiceAccountId): Probe[] {
  const other = `${nodeName}-admission-check`;
  return [{
    policy: 'own-node-annotations',
    what: `a foreign label on its own Node ${nodeName}`,
    risk: 'label, taint or annotate any Node',
    send: () => client.patch(NODES, nodeName, { metadata: { labels: { [`${ANNOTATION_PREFIX}admission-check`]: 'refused' } } }, { dryRun: true }),
  }, {
    policy: 'own-node-events',
    what: `an Event about another Node (${other})`,
    risk: 'write Events about any object in the kubelet\'s or another node\'s name',
    send: () => client.create(EVENTS, {
      apiVersion: 'v1', kind: 'Event',
      metadata: { name: `${nodeName}.admission-check`, namespace: 'default' },
      involvedObject: { apiVersion: 'v1', kind: 'Node', name: other, uid: other },
      reason: 'AdmissionCheck', type: 'Normal', message: 'a dry run the admission policy must refuse',
      source: { component: REPORTING_COMPONENT, host: nodeName }, reportingComponent: REPORTING_COMPONENT, reportingInstance: nodeName,
      action: 'Check', firstTimestamp: new Date().toISOString(), lastTimestamp: new Date().toISOString(), count: 1,
    }, { namespace: 'default', dryRun: true }),
  }, {
    policy: 'own-heartbeat',
    what: `a heartbeat Lease named after another node (${other})`,
    risk: 'renew other nodes\' heartbeats or take over Leases in its namespace',
    send: () => client.create(LEASES, heartbeatLease(other, account.namespace, heartbeatSpec(other, 60_000, Date.now()), undefined), { namespace: account.namespace, dryRun: true }),
  }];
}

/** "ValidatingAdmissionPolicy 'acme-node-tuning-advisor-own-heartbeat' with binding '…' denied request: …" → the policy's name. */
function refusingPolicy(err: unknown): string | undefined {
  if (!(err instanceof KubeError) || (err.code !== '422' && err.code !== '403')) return undefined;
  return /ValidatingAdmissionPolicy '([^']{1,253})'/.exec(err.message)?.[1];
}

/**
 * Held: every policy refused its write (or RBAC did, which leaves the token nothing to misuse there).
 * Not held: one was accepted. Throws when the server gave no answer to decide by (retried by the agent).
 */
export async function verifyAdmission(client: KubeClient, nodeName: string, account: ServiceAccountId): Promise<AdmissionVerdict> {
  const user = `system:serviceaccount:${account.namespace}:${account.name}`;
  const lines: string[] = [];
  for (const probe of probes(client, nodeName, account)) {
    try {
      await probe.send();
    } catch (err) {
      const policy = refusingPolicy(err);
      if (policy) {
        lines.push(`admission: ${probe.what} refused by ValidatingAdmissionPolicy ${policy}`);
        continue;
      }
      if (err instanceof KubeError && err.code === '403') {
        lines.push(`admission: ${probe.what} refused by RBAC, not a policy (its token cannot make that write at all)`);
        continue;
      }
      throw err;
    }
    return {
      held: false,
      reason: `not starting: no admission policy holds ${user}: a dry run of ${probe.what} was accepted, so its token could ${probe.risk} `
        + `(the ${probe.policy} policy does not apply to it). ${FIX}.`,
    };
  }
  return { held: true, lines };
}
