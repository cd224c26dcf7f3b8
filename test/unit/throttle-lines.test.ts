import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { lineTime, matchThrottle, parseGoDuration } from '../../src/collectors/throttle-lines.ts';

test('Go durations in milliseconds', () => {
  assert.equal(parseGoDuration('298.07161ms'), 298.07161);
  assert.equal(parseGoDuration('1.5s'), 1500);
  assert.equal(parseGoDuration('1m2.5s'), 62_500);
  assert.equal(parseGoDuration('500µs'), 0.5);
  assert.equal(parseGoDuration('12'), undefined);
  assert.equal(parseGoDuration('fast'), undefined);
});

test('all four client-go formats are recognised with their wait', () => {
  const api = 'https://10.0.0.10:6443/api/v1/namespaces/default/pods';
  assert.deepEqual(matchThrottle(`I0120 10:15:02.117394 1 request.go:591] Throttling request took 298.07161ms, request: PUT:${api}/a/status`), { waitMs: 298.07161, format: 'throttling-request-took' });
  assert.deepEqual(matchThrottle(`I0513 request.go:697] Waited for 1.19s due to client-side throttling, not priority and fairness, request: GET:${api}`), { waitMs: 1190, format: 'waited-for' });
  assert.deepEqual(matchThrottle(`I0513 request.go:697] Waited for 1s, retries: 1, retry-after: 1s - request: GET:${api}`), { waitMs: 1000, format: 'waited-for-retry' });
  assert.deepEqual(matchThrottle(`I0108 request.go:752] "Waited before sending request" delay="1.002110385s" reason="client-side throttling, not priority and fairness" verb="GET" URL="${api}"`), { waitMs: 1002.110385, format: 'structured' });
});

test('the structured format is recognised inside a Docker json-file line, with escaped quotes', () => {
  const line = JSON.stringify({ log: 'I0108 request.go:752] "Waited before sending request" delay="80ms" reason="client-side throttling, not priority and fairness"\n', stream: 'stderr', time: '2026-01-08T22:38:00.684453Z' });
  assert.deepEqual(matchThrottle(line), { waitMs: 80, format: 'structured' });
});

test('lines that only look alike are not throttling', () => {
  assert.equal(matchThrottle('Waited for the cache to sync'), undefined);
  assert.equal(matchThrottle('"Waited before sending request" reason="x"'), undefined, 'no delay');
  assert.equal(matchThrottle('Successfully bound pod to node'), undefined);
});

test('line times from CRI, Docker json, journal short-iso, RFC 3339 syslog, classic syslog and bare klog', () => {
  const expected = Date.UTC(2026, 10, 30, 13, 20, 0, 120);
  assert.equal(lineTime('2026-11-30T13:20:00.120000000Z stderr F I1130 …', 2026), expected);
  assert.equal(lineTime('{"log":"x\\n","stream":"stderr","time":"2026-11-30T13:20:00.120000000Z"}', 2026), expected);
  assert.equal(lineTime('2026-11-30T13:20:00+0000 cp1 kubelet[812]: x', 2026), Date.UTC(2026, 10, 30, 13, 20, 0));
  assert.equal(lineTime('2026-11-30T13:20:00.120000+00:00 cp1 kubelet[812]: x', 2026), expected);
  assert.equal(lineTime('Nov 30 13:20:00 cp1 kubelet[812]: x', 2026), Date.UTC(2026, 10, 30, 13, 20, 0));
  assert.equal(lineTime('I1130 13:20:00.120000     812 request.go:697] x', 2026), Date.UTC(2026, 10, 30, 13, 20, 0));
  assert.equal(lineTime('no time here', 2026), undefined);
});

test('the line parsers never throw on garbage', () => {
  fc.assert(
    fc.property(fc.string(), (text) => {
      matchThrottle(text);
      matchThrottle(`Waited for ${text}`);
      lineTime(text, 2026);
      parseGoDuration(text);
    }),
  );
});
