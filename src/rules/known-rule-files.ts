// Rule files the build has already parsed. From source nothing is known and every file is parsed.
// The bundle replaces this module by one holding the texts of the bundled rules/*.yaml and what
// parseRuleText made of them (scripts/bundle.ts, PRECOMPILED): the CLI and the agent skip YAML
// parsing and checking (~50 ms per process) for a file whose text is byte for byte the one built
// from (the image's rules/, the rules ConfigMap's copies); any other text is parsed as usual.
import type { ParsedRuleFile } from './rule-file.ts';

export function knownRuleFile(_text: string): ParsedRuleFile | undefined {
  return undefined;
}
