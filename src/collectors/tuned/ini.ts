// TuneD's profile files as Python's ConfigParser reads them with TuneD's settings
// (delimiters "=", inline comments "#" after whitespace, strict=False, case kept): sections
// and options with the line that set each, so an effective setting can name its file:line.

export interface IniOption {
  key: string;
  value: string;
  /** 1-based line of the option (its first line when continued). */
  line: number;
}

export interface IniSection {
  name: string;
  line: number;
  options: IniOption[];
}

export type IniParse = { ok: true; sections: IniSection[] } | { ok: false; reason: string };

function withoutInlineComment(raw: string): string {
  const trimmed = raw.trim();
  if (trimmed.startsWith('#') || trimmed.startsWith(';')) return '';
  const inline = /(^|\s)#/.exec(raw);
  return (inline ? raw.slice(0, inline.index) : raw).trim();
}

/**
 * Strict parse: a line that is neither a section, an option nor a continuation, or an option
 * before the first section, makes the whole file invalid, as it does for TuneD ("Cannot parse").
 */
export function parseIniStrict(text: string): IniParse {
  const sections = new Map<string, IniSection>();
  let current: IniSection | undefined;
  let last: IniOption | undefined;
  let lastIndent = Number.MAX_SAFE_INTEGER;
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index++) {
    const raw = lines[index] as string;
    const value = withoutInlineComment(raw);
    if (value === '') continue;
    const indent = raw.length - raw.trimStart().length;
    if (current && last && indent > lastIndent) {
      last.value = `${last.value}\n${value}`;
      continue;
    }
    const header = /^\[(.+)\]/.exec(value);
    if (header) {
      const name = header[1] as string;
      current = sections.get(name) ?? { name, line: index + 1, options: [] };
      sections.set(name, current);
      last = undefined;
      lastIndent = Number.MAX_SAFE_INTEGER;
      continue;
    }
    if (!current) return { ok: false, reason: `line ${index + 1} comes before any [section] header` };
    const eq = value.indexOf('=');
    const key = eq > 0 ? value.slice(0, eq).trim() : '';
    if (key === '') return { ok: false, reason: `line ${index + 1} is not "key=value": ${JSON.stringify(value.slice(0, 60))}` };
    const option = { key, value: value.slice(eq + 1).trim(), line: index + 1 };
    const existing = current.options.findIndex((o) => o.key === key);
    if (existing >= 0) current.options.splice(existing, 1);
    current.options.push(option);
    last = option;
    lastIndent = indent;
  }
  return { ok: true, sections: [...sections.values()] };
}

/** Lenient parse for recommend rules: invalid lines are skipped. */
export function parseIni(text: string): IniSection[] {
  const sections: IniSection[] = [];
  let current: IniSection | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = withoutInlineComment(raw);
    if (line === '') return;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      current = { name: (header[1] as string).trim(), line: index + 1, options: [] };
      sections.push(current);
      return;
    }
    const eq = line.indexOf('=');
    if (current && eq > 0) current.options.push({ key: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim(), line: index + 1 });
  });
  return sections;
}
