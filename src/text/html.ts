// The one way text reaches an HTML page. Pod, node and rule names come from the API server and from
// files anyone may write: `<img src=x onerror=…>` as a pod name must show as those characters. The
// `html` tag escapes every value it interpolates (after removing the control table: bidi controls
// reorder text in a browser as in a terminal); only markup built by `html` itself passes through.
import { stripControls } from './controls.ts';

/** Markup built by `html`: the only value interpolated without escaping. */
export class Markup {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = Markup | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for an HTML element or a quoted attribute value: control characters removed, `& < > " '` escaped. */
export function escapeHtml(text: string): string {
  return stripControls(text).replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

function render(value: HtmlValue): string {
  if (value instanceof Markup) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false || value === true) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  return escapeHtml(value as string);
}

/** A template of markup: every `${value}` is escaped (arrays joined, null/undefined/booleans dropped) unless it is Markup. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Markup {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] as string);
  return new Markup(out);
}

/** Markup written in the source (a style sheet, an SVG path): never for data. */
export function trusted(text: string): Markup {
  return new Markup(text);
}
