// The one grammar of the `{{…}}` placeholders in a rule's texts (observed, expected, message,
// remediation): `{{fact.key}}`, `{{params.name}}` and `{{params.name[fact.key]}}` (the param
// `name_<value of the fact>`). The engine renders them, lint checks them, the one-line budget and
// the static fix substitute them: all through this module.

export type Placeholder =
  /** `{{fact.key}}`; a key that starts with `params.` but is no plain param name stays a key here. */
  | { kind: 'fact'; key: string }
  | { kind: 'param'; name: string }
  | { kind: 'param-by-fact'; name: string; key: string };

const PLACEHOLDER = /\{\{\s*(?:params\.([A-Za-z0-9_]+)(?:\[([A-Za-z0-9_.-]+)\])?|([A-Za-z0-9_.-]+))\s*\}\}/g;

function placeholderOf(match: RegExpMatchArray): Placeholder {
  const [, name, byFact, key] = match;
  if (key !== undefined) return { kind: 'fact', key };
  return byFact !== undefined ? { kind: 'param-by-fact', name: name as string, key: byFact } : { kind: 'param', name: name as string };
}

/** The placeholders of a template, in order. */
export function placeholders(template: string): Placeholder[] {
  return [...template.matchAll(PLACEHOLDER)].map(placeholderOf);
}

/** The template with each placeholder replaced by what `render` makes of it. */
export function substitute(template: string, render: (placeholder: Placeholder) => string): string {
  return template.replace(PLACEHOLDER, (...match) => render(placeholderOf(match as unknown as RegExpMatchArray)));
}

/** The param a `{{params.x}}`-shaped fact key names (`params.a.b` → `a.b`), or undefined for a fact. */
export function paramOfKey(key: string): string | undefined {
  return key.startsWith('params.') ? key.slice('params.'.length) : undefined;
}
