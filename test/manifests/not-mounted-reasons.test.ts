// Issue 12 item 6: the reasons test/manifests/posture.test.ts gives for host paths the DaemonSet does
// not mount must be true in the code. /etc/system-release-cpe: "the distribution comes from
// /usr/lib/os-release" (TuneD's system= rules match the same CPE string). /var/lib/dpkg: "kubelet
// reports its version on the Node" is test/agent/kubelet-version-node.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { recommendProfile } from '../../src/collectors/tuned/recommend.ts';
import { HostRoot } from '../../src/host/host-root.ts';
import { fixtureHost, tempHost } from '../helpers/fixtures.ts';

const SITE_RULE = '[throughput-performance,site]\nsystem=.*enterprise_linux.*\n';

test('without /etc/system-release-cpe (not mounted), a system= rule on a Red Hat family host is unknown, naming the file: TuneD matches only that file', async (t) => {
  const rhel = await readFile(`${fixtureHost('rhel-hz1000-tuned-merged')}/etc/os-release`, 'utf8');
  const withCpe = await tempHost(t, { 'etc/tuned/recommend.d/90-site.conf': SITE_RULE, 'etc/system-release-cpe': 'cpe:/o:redhat:enterprise_linux:9::baseos\n' });
  assert.deepEqual(await recommendProfile({ host: new HostRoot(withCpe), virt: '' }, true), { profile: 'throughput-performance', file: '/etc/tuned/recommend.d/90-site.conf' });
  const daemonSet = await tempHost(t, { 'etc/tuned/recommend.d/90-site.conf': SITE_RULE, 'usr/lib/os-release': rhel });
  const undecided = await recommendProfile({ host: new HostRoot(daemonSet), virt: '' }, true);
  assert.match((undecided as { unknown?: string }).unknown ?? '', /needs \/etc\/system-release-cpe, which TuneD matches system= against/);
});

test('a distribution without system-release-cpe matches "" as TuneD does, whatever its os-release says', async (t) => {
  const debian = await readFile(`${fixtureHost('intel-pstate-epp-power')}/etc/os-release`, 'utf8');
  const root = await tempHost(t, { 'etc/tuned/recommend.d/90-site.conf': '[throughput-performance,site]\nsystem=.+\n', 'usr/lib/os-release': `${debian}CPE_NAME="cpe:/o:debian:debian:12"\n` });
  const recommended = await recommendProfile({ host: new HostRoot(root), virt: '' }, true);
  assert.notEqual((recommended as { profile?: string }).profile, 'throughput-performance');
});
