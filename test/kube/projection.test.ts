// The projecting decoder (src/kube/projection.ts) against JSON.parse: on any JSON value it keeps
// exactly what a projection of JSON.parse's result keeps, on any text JSON.parse refuses it throws
// Malformed (or, for text inside a part it steps over, still answers what the shape names), and
// the pods the agent keeps read as podView reads the whole pod.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Malformed } from '../../src/kube/decode.ts';
import { MAX_KEPT_STRING, parseProjected, type Shape } from '../../src/kube/projection.ts';
import { POD_FIELDS, podView } from '../../src/workload/pod-view.ts';

/** What the shape keeps of a value JSON.parse built: the reference the decoder must equal. */
function project(value: unknown, shape: Shape): unknown {
  if (Array.isArray(value)) {
    if (typeof shape === 'object' && 'items' in shape) return value.slice(0, shape.max).map((v) => project(v, shape.items));
    return shape === 'present' ? true : [];
  }
  if (typeof value === 'object' && value !== null) {
    if (typeof shape === 'object' && 'fields' in shape) {
      const out: Record<string, unknown> = {};
      let rest = 0;
      for (const [key, v] of Object.entries(value)) {
        const own = Object.hasOwn(shape.fields, key) ? shape.fields[key] : undefined;
        const sub = own ?? (shape.rest !== undefined && rest < (shape.maxKeys ?? 64) ? shape.rest : undefined);
        if (sub === undefined) continue;
        if (own === undefined) rest += 1;
        const kept = project(v, sub);
        // defineProperty, as JSON.parse does: `out[key] =` with key __proto__ would set the prototype.
        if (kept !== undefined) Object.defineProperty(out, key, { value: kept, enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return shape === 'present' ? true : {};
  }
  if (shape === 'present') return value === null ? null : true;
  if (typeof value === 'string' && Buffer.byteLength(JSON.stringify(value)) - 2 > MAX_KEPT_STRING) return undefined;
  return value;
}

const SHAPE: Shape = {
  fields: {
    a: 'scalar', b: { items: { fields: { x: 'scalar', y: 'present' } }, max: 3 },
    c: { fields: { d: 'scalar' }, rest: { items: 'scalar', max: 2 }, maxKeys: 2 },
  },
};
const keys = fc.constantFrom('a', 'b', 'c', 'd', 'x', 'y', 'z', '__proto__', 'é\u2028');
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 1 }), tie('object'), tie('array'), fc.string({ minLength: 4090, maxLength: 4100 })),
  object: fc.dictionary(keys, tie('value'), { maxKeys: 6 }),
  array: fc.array(tie('value'), { maxLength: 6 }),
})).value;

test('on any JSON value: exactly what projecting JSON.parse\'s result keeps', () => {
  fc.assert(fc.property(json, fc.constantFrom('', ' ', '\n\t '), (value, space) => {
    const text = JSON.stringify(value, null, space.length > 1 ? space : undefined) ?? 'null';
    assert.deepEqual(parseProjected(Buffer.from(text), SHAPE, 't'), project(JSON.parse(text), SHAPE));
  }), { numRuns: 400 });
});

test('text JSON.parse refuses: Malformed, never another error or a hang', () => {
  const broken = fc.oneof(
    fc.string({ maxLength: 40 }),
    json.chain((v) => {
      const text = JSON.stringify(v) ?? 'null';
      return fc.nat(text.length).map((cut) => text.slice(0, cut));
    }),
    fc.constantFrom('{"a":1,}', '{"a" 1}', '[1 2]', '{"a":"\\"}', '{"a":tru}', '"', '{"b":[{"x":1}', '{} x', '{"a":--1}'),
  );
  fc.assert(fc.property(broken, (text) => {
    let parsed = true;
    try { JSON.parse(text); } catch { parsed = false; }
    if (parsed) return;
    try {
      parseProjected(Buffer.from(text), { fields: { a: 'scalar', b: { items: { fields: { x: 'scalar' } }, max: 9 } } }, 't');
    } catch (err) {
      assert.ok(err instanceof Malformed, String(err));
    }
  }), { numRuns: 600 });
});

test('a pod kept by POD_FIELDS reads as the whole pod does, without its environment, volumes\' contents or managedFields', () => {
  const now = '2026-01-02T03:04:05Z';
  const pod = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name: 'p', namespace: 'ns', uid: 'u-1', resourceVersion: '7', creationTimestamp: now, labels: { app: 'x' },
      annotations: { 'kubernetes.io/config.mirror': 'abc', other: 'y'.repeat(100_000) }, managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': {} } }],
    },
    spec: {
      nodeName: 'n', containers: [{ name: 'c', env: [{ name: 'BLOB', value: 'x'.repeat(1_200_000) }] }, { name: 'd' }],
      volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }, { name: 'w', configMap: { name: 'big', items: [] } }],
    },
    status: {
      phase: 'Running',
      conditions: ['PodScheduled', 'Initialized', 'Ready'].map((type) => ({ type, status: 'True', lastTransitionTime: now, message: 'm'.repeat(9000) })),
      containerStatuses: [{ name: 'c', started: true, state: { running: { startedAt: now } } }, { name: 'd', started: true, state: { running: { startedAt: now } } }],
    },
  };
  const text = JSON.stringify(pod);
  const kept = parseProjected(Buffer.from(text), POD_FIELDS, 'pod') as typeof pod;
  assert.deepEqual(podView(kept), podView(JSON.parse(text)));
  assert.ok(JSON.stringify(kept).length < 1500, `kept ${JSON.stringify(kept).length} bytes of ${text.length}`);
  assert.deepEqual(kept.metadata.annotations, { 'kubernetes.io/config.mirror': 'abc' });
  assert.equal(kept.metadata.managedFields, undefined);
  assert.deepEqual(kept.spec.volumes, [{ name: true, persistentVolumeClaim: true }, { name: true, configMap: true }]);
});
