// How the agent's Node Events are found again: their source component, namespace and reasons
// (written by publish/events.ts, listed by cluster/node-advice.ts).

export const REPORTING_COMPONENT = 'node-tuning-advisor';
/** Node Events live in "default", where kubelet writes them; `kubectl describe node` searches all namespaces. */
export const EVENT_NAMESPACE = 'default';
export const REASON_RECOMMENDATION = 'TuningRecommendation';
export const REASON_RESOLVED = 'TuningResolved';
