import { collectFacts } from '../../facts/collect.ts';
import { nodeNameOf, openHost } from '../../scan.ts';
import { terminalJson } from '../../text/terminal.ts';
import { terminalYaml } from '../../text/terminal-yaml.ts';
import { EXIT_OK, oneOf, parseFlags, type Io } from '../io.ts';

export const FACTS_USAGE = `Usage: node-tuning-advisor facts [flags]

Prints every fact the collectors found, each with its value and source (like "nfd export").
Unknown facts carry the reason in "unknown".

Flags:
  --host-root DIR     where the host's / is (default /)
  --output FORMAT     json (default) or yaml
  --node-name NAME    node name to print (default: $NODE_NAME, then the host name)
  -h, --help          this help
`;

export async function factsCommand(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(
    args,
    { 'host-root': { type: 'string', default: '/' }, output: { type: 'string', short: 'o' }, 'node-name': { type: 'string' } },
    'facts',
  );
  if (values.help) {
    io.stdout.write(FACTS_USAGE);
    return EXIT_OK;
  }
  const output = oneOf('--output', values.output, ['json', 'yaml'] as const, 'json');
  const host = await openHost(values['host-root'] as string);
  const facts = await collectFacts(host);
  const document = { node: nodeNameOf(facts, host, values['node-name'] ?? io.env.NODE_NAME), hostRoot: host.root, facts: facts.toJSON() };
  io.stdout.write(output === 'yaml' ? terminalYaml(document) : `${terminalJson(document)}\n`);
  return EXIT_OK;
}
