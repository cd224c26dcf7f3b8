// Facts are what collectors found, keyed by dotted names ("kernel.hz"), each with where it came from.
// A known fact may be null ("looked, and there is none": no EPP file, no tuned profile). An unknown
// fact says why it could not be decided; rules treat it as unknown, never as a pass.

export type FactValue =
  | string
  | number
  | boolean
  | null
  | string[]
  | number[]
  | Record<string, unknown>
  | Record<string, unknown>[];

export interface Fact {
  value: FactValue;
  /** A host path, "command:…", "flag:…", "api:…", "default" or "inferred". */
  source: string;
  /** Extra evidence a human wants beside the source (how an inferred value was measured). */
  detail?: string;
  /** Set when the fact could not be decided: the reason. */
  unknown?: string;
}

/**
 * A reason or detail is a sentence, and may quote what a host holds (a process argument, a line of
 * a file): longer ones are cut here, before any renderer or regex sees them.
 */
export const MAX_FACT_TEXT = 1024;

function bounded(text: string): string {
  return text.length <= MAX_FACT_TEXT ? text : `${text.slice(0, MAX_FACT_TEXT - 1)}…`;
}

export class FactSet {
  private readonly facts = new Map<string, Fact>();

  set(key: string, value: FactValue, source: string, detail?: string): void {
    this.facts.set(key, detail === undefined ? { value, source } : { value, source, detail: bounded(detail) });
  }

  unknown(key: string, reason: string, source = 'unknown'): void {
    this.facts.set(key, { value: null, source, unknown: bounded(reason) });
  }

  get(key: string): Fact | undefined {
    return this.facts.get(key);
  }

  /** The value of a decided fact, or undefined when it is missing or unknown. */
  value(key: string): FactValue | undefined {
    const fact = this.facts.get(key);
    return fact === undefined || fact.unknown !== undefined ? undefined : fact.value;
  }

  has(key: string): boolean {
    return this.facts.has(key);
  }

  keys(): string[] {
    return [...this.facts.keys()].sort();
  }

  toJSON(): Record<string, Fact> {
    return Object.fromEntries(this.keys().map((key) => [key, this.facts.get(key) as Fact]));
  }
}
