// The pieces scripts/sync-chart.ts builds the chart's templates from: the differences between the
// base's objects and an overlay's (only list items appended, as the components' `op: add …/-`
// patches do; anything else is refused), the merge of those items over all distributions into one
// ordered list of `{{- if }}` blocks, and the text of a template: the object as YAML with markers
// where a value or a block goes, literal `{{` escaped, then each marker replaced by template code.
import { isDeepStrictEqual } from 'node:util';
import { stringify } from 'yaml';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;
/** How a literal `{{` is written in a Helm template. */
export const HELM_ESCAPED_BRACES = '{{"{{"}}';

/** A path into an object, e.g. ['spec', 'template', 'spec', 'volumes']. */
export type JsonPath = (string | number)[];

/** List items an overlay appends to the base object, per list. */
export interface Appended { path: JsonPath; items: Json[] }

/** What `variant` adds to `base`: items appended to lists; any other difference throws, naming where. */
export function appendedItems(base: Json, variant: Json, where: string, at: JsonPath = []): Appended[] {
  const here = `${where} at ${at.join('.') || '(top)'}`;
  if (Array.isArray(base) && Array.isArray(variant)) {
    if (variant.length < base.length) throw new Error(`chart: ${here}: the overlay removes list items (only appended items can be templated)`);
    const found = base.flatMap((item, i) => appendedItems(item, variant[i], where, [...at, i]));
    return variant.length > base.length ? [...found, { path: at, items: variant.slice(base.length) }] : found;
  }
  if (isObject(base) && isObject(variant)) {
    if (!isDeepStrictEqual(Object.keys(base).sort(), Object.keys(variant).sort())) {
      throw new Error(`chart: ${here}: the overlay adds or removes fields (only appended list items can be templated)`);
    }
    return Object.keys(base).flatMap((k) => appendedItems(base[k], variant[k], where, [...at, k]));
  }
  if (!isDeepStrictEqual(base, variant)) throw new Error(`chart: ${here}: the overlay changes a value (only appended list items can be templated)`);
  return [];
}

/** A list item of the base that a variant leaves out. */
export interface Removed { path: JsonPath; index: number }

/** What `variant` leaves out of `base`: list items only (each list a subsequence of the base's); any other difference throws. */
export function removedItems(base: Json, variant: Json, where: string, at: JsonPath = []): Removed[] {
  const here = `${where} at ${at.join('.') || '(top)'}`;
  if (Array.isArray(base) && Array.isArray(variant)) {
    if (base.length === variant.length) return base.flatMap((item, i) => removedItems(item, variant[i], where, [...at, i]));
    const out: Removed[] = [];
    let v = 0;
    base.forEach((item, i) => {
      if (v < variant.length && isDeepStrictEqual(item, variant[v])) v++;
      else out.push({ path: at, index: i });
    });
    if (v !== variant.length || variant.length > base.length) throw new Error(`chart: ${here}: the component adds, changes or reorders list items (only removed items can be templated)`);
    return out;
  }
  if (isObject(base) && isObject(variant)) {
    if (!isDeepStrictEqual(Object.keys(base).sort(), Object.keys(variant).sort())) {
      throw new Error(`chart: ${here}: the component adds or removes fields (only removed list items can be templated)`);
    }
    return Object.keys(base).flatMap((k) => removedItems(base[k], variant[k], where, [...at, k]));
  }
  if (!isDeepStrictEqual(base, variant)) throw new Error(`chart: ${here}: the component changes a value (only removed list items can be templated)`);
  return [];
}

/** One `{{- if }}` block: items that exactly the distributions `when` add, in a row. */
export interface Block { when: string[]; items: Json[] }

/**
 * The items every distribution appends to one list, merged into one order that each distribution's
 * own order is a subsequence of, grouped into blocks of consecutive items with the same distributions.
 */
export function mergeAppended(byDistribution: Map<string, Json[]>, where: string): Block[] {
  const merged: { item: Json; when: string[] }[] = [];
  const indexOf = (item: Json) => merged.findIndex((m) => isDeepStrictEqual(m.item, item));
  for (const [distribution, items] of byDistribution) {
    let previous = -1;
    for (const item of items) {
      let at = indexOf(item);
      if (at < 0) {
        at = previous < 0 ? merged.length : previous + 1;
        merged.splice(at, 0, { item, when: [] });
      }
      merged[at]!.when.push(distribution);
      previous = at;
    }
  }
  for (const [distribution, items] of byDistribution) {
    const seen = merged.filter((m) => m.when.includes(distribution)).map((m) => m.item);
    if (!isDeepStrictEqual(seen, items)) throw new Error(`chart: ${where}: the overlays append items in orders that one list cannot hold (${distribution})`);
  }
  const blocks: Block[] = [];
  for (const { item, when } of merged) {
    const last = blocks.at(-1);
    if (last && isDeepStrictEqual(last.when, when)) last.items.push(item);
    else blocks.push({ when: [...when], items: [item] });
  }
  return blocks;
}

/** A template action put where a marker line is: `make` gets the line's indentation. */
export interface MarkerLine { marker: string; make: (indent: string) => string }

/** `@@NTA_…@@`: a value no object holds, which YAML quotes and never folds. */
export function marker(name: string): string {
  return `@@NTA_${name}@@`;
}

/** The object as YAML with `{{` escaped; each line holding a marker replaced by its template code. */
export function templateText(object: Json, lines: MarkerLine[], replacements: [string, string][] = []): string {
  let text = escapeBraces(stringify(object, { lineWidth: 0 }));
  for (const [from, to] of replacements) text = text.replaceAll(from, to);
  const out = text.split('\n').map((line) => {
    const hit = lines.find((l) => line.includes(l.marker));
    return hit ? hit.make(/^ */.exec(line)![0]) : line;
  }).join('\n');
  const left = /@@NTA_[A-Z0-9_]+@@/.exec(out);
  if (left) throw new Error(`chart: marker ${left[0]} was not replaced`);
  return out;
}

/** A block's items as sequence entries at `indent`, inside `{{- if COND }}` … `{{- end }}`. */
export function blockText(block: Block, indent: string, variable: string): string {
  const cond = block.when.length === 1
    ? `eq ${variable} ${JSON.stringify(block.when[0])}`
    : `has ${variable} (list ${block.when.map((d) => JSON.stringify(d)).join(' ')})`;
  return guardedItems(block.items, indent, cond);
}

/** Sequence entries at `indent`, inside `{{- if COND }}` … `{{- end }}`. */
export function guardedItems(items: Json[], indent: string, cond: string): string {
  const text = escapeBraces(stringify(items, { lineWidth: 0 })).trimEnd().split('\n').map((l) => indent + l).join('\n');
  return `{{- if ${cond} }}\n${text}\n{{- end }}`;
}

export function escapeBraces(text: string): string {
  return text.replaceAll('{{', HELM_ESCAPED_BRACES);
}

export function getAt(object: Json, at: JsonPath): Json {
  return at.reduce((o, k) => o?.[k], object);
}

export function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
