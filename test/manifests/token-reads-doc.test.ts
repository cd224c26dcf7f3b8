// Issue 37 item 8: docs/security.md listed only the writes a stolen agent token can make and said the
// agent reads "the pods bound to it". Its section on the read side must name every read the agent's
// ClusterRole grants (manifests/base/rbac.yaml), resource by resource, say that RBAC cannot filter by
// node, and recommend Secrets over environment values. (test/e2e/admission-policy.test.ts asks the
// real kube-apiserver, with the agent's token, whether each documented read is allowed.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO } from '../helpers/manifests.ts';
import { documentedReads } from '../helpers/token-reads.ts';

const READ_VERBS = new Set(['get', 'list', 'watch']);

test('docs/security.md names every read the agent\'s ClusterRole grants, and how to narrow them', async () => {
  const docs = parseAllDocuments(await readFile(path.join(REPO, 'manifests/base/rbac.yaml'), 'utf8')).map((d) => d.toJS());
  const role = docs.find((d) => d.kind === 'ClusterRole');
  const reads = (role.rules as { resources: string[]; verbs: string[] }[])
    .flatMap((r) => r.resources.flatMap((resource) => r.verbs.filter((v) => READ_VERBS.has(v)).map((verb) => `${resource} ${verb}`)));
  const documented = await documentedReads();
  assert.deepEqual(documented.granted.sort(), reads.sort(), 'the table lists exactly the ClusterRole\'s reads');
  assert.match(documented.text, /RBAC\s+cannot filter by node/);
  assert.match(documented.text, /env\[\]\.value/);
  assert.match(documented.text, /secretKeyRef/);
});
