// What a release publishes, read from the shipped files, and the check that they agree: the
// package's version is the chart's version and appVersion, the image tag the manifests pin, the
// version of the runbooks the alerts link, and (with --tag) the git tag without its v. The image's
// name is the chart's default (values.yaml image.repository, which the manifests name too): the
// release pushes exactly what a default install pulls; the chart goes to <registry>/<namespace>/charts.
//   node scripts/release-info.ts [--tag vX.Y.Z]   prints version=, image=, registry=, chart-repository=
//   lines (for $GITHUB_OUTPUT); exit 1 naming each file that disagrees, 2 on a bad flag.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

export interface ReleaseInfo { version: string; image: string; registry: string; chartRepository: string }

/** The release's names, and every way the shipped files disagree with the package's version (and the tag). */
export function releaseInfo(tag?: string): { info: ReleaseInfo; problems: string[] } {
  const version = (JSON.parse(read('package.json')) as { version: string }).version;
  const chart = parse(read('charts/node-tuning-advisor/Chart.yaml'));
  const values = parse(read('charts/node-tuning-advisor/values.yaml'));
  const base = parse(read('manifests/base/kustomization.yaml'));
  const daemonSet = parseAllDocuments(read('manifests/base/daemonset/daemonset.yaml')).map((d) => d.toJS()).find((o) => o?.kind === 'DaemonSet');
  const image = String(values.image.repository);
  const [registry = '', namespace = ''] = image.split('/');
  const problems: string[] = [];
  const expect = (what: string, actual: unknown, wanted: string) => {
    if (String(actual) !== wanted) problems.push(`${what} is ${JSON.stringify(actual)}, not ${JSON.stringify(wanted)}`);
  };
  if (tag !== undefined) expect('the tag', tag, `v${version}`);
  expect('charts/node-tuning-advisor/Chart.yaml version', chart.version, version);
  expect('charts/node-tuning-advisor/Chart.yaml appVersion', chart.appVersion, version);
  const pinned = (base.images ?? []).find((i: { name: string }) => i.name === image);
  expect('manifests/base/kustomization.yaml images[].newTag of the chart\'s image', pinned?.newTag, version);
  for (const file of kustomizations()) {
    for (const entry of parse(read(file)).images ?? []) {
      if (entry.name === image && entry.newTag !== undefined) expect(`${file} images[].newTag`, entry.newTag, version);
    }
  }
  expect('manifests/base/daemonset/daemonset.yaml\'s image', daemonSet?.spec.template.spec.containers[0].image, image);
  expect('values.yaml prometheusOperator.runbookBaseUrl\'s version', /\/blob\/v([^/]+)\//.exec(values.prometheusOperator.runbookBaseUrl)?.[1], version);
  if (!registry.includes('.') || !namespace || image.split('/').length < 3) problems.push(`values.yaml image.repository ${image} names no registry host and namespace (registry/namespace/name)`);
  return { info: { version, image, registry, chartRepository: `oci://${registry}/${namespace}/charts` }, problems };
}

/** Every kustomization.yaml under manifests/ (relative to the repository). */
function kustomizations(): string[] {
  return (readdirSync(path.join(ROOT, 'manifests'), { recursive: true, encoding: 'utf8' }) as string[])
    .filter((f) => path.basename(f) === 'kustomization.yaml').map((f) => path.join('manifests', f)).sort();
}

function main(argv: string[]): number {
  let tag: string | undefined;
  try {
    tag = parseArgs({ args: argv, options: { tag: { type: 'string' } } }).values.tag;
  } catch (e) {
    process.stderr.write(`release-info: ${(e as Error).message} (flag: --tag vX.Y.Z)\n`);
    return 2;
  }
  const { info, problems } = releaseInfo(tag);
  if (problems.length > 0) {
    process.stderr.write(`release-info: the shipped files disagree with package.json's version ${info.version} (DEVELOPERS.md "Releasing"):\n${problems.map((p) => `  ${p}\n`).join('')}`);
    return 1;
  }
  process.stdout.write(`version=${info.version}\nimage=${info.image}\nregistry=${info.registry}\nchart-repository=${info.chartRepository}\n`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) process.exitCode = main(process.argv.slice(2));
