// Client-side throttling lines as client-go writes them (three of its four formats), stamped in the
// last minutes: what a throttled CSI sidecar or Tekton controller logs (seed 002).
const recent = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();

export const THROTTLE_LINES = [
  `${recent(5)} I1201 10:00:00.000000       1 request.go:601] Waited for 1.19s due to client-side throttling, not priority and fairness, request: POST:https://10.96.0.1:443/api/v1/namespaces/default/events`,
  `${recent(4)} I1201 10:01:00.000000       1 request.go:591] Throttling request took 192.714335ms, request: POST:https://10.96.0.1:443/api/v1/namespaces/default/events`,
  `${recent(3)} I1201 10:02:00.000000       1 request.go:700] "Waited before sending request" delay="2.5s" reason="client-side throttling, not priority and fairness" verb="GET" URL="https://10.96.0.1:443/api/v1/persistentvolumeclaims"`,
].join('\n');
