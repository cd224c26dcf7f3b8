// JSON decoded straight from the bytes the server sent, keeping only the fields a shape names: a
// tenant's 1.2 MB environment value in a pod is stepped over byte by byte and never becomes a
// string, so what a list or watch costs in heap is what the agent reads, not what tenants wrote.
// Kept strings are bounded (longer ones are dropped: the reader sees the field missing), arrays
// and open maps are bounded in length. A value of another type than the shape expects is kept as an
// empty container of its own type (or the bounded scalar), so the checks after decoding still name
// the defect (`metadata is an array`). Syntax errors throw Malformed, as JSON.parse would.
import { Malformed } from './decode.ts';

/**
 * `'scalar'`: a string (≤ MAX_KEPT_STRING bytes), number, boolean or null; `'present'`: `true`
 * when the value is not null (what a volume's source is, not its content); `fields`: an object
 * with those keys (and `rest` for any other key, at most `maxKeys` of them); `items`: an array of
 * at most `max` elements.
 */
export type Shape = 'scalar' | 'present' | ObjectShape | { readonly items: Shape; readonly max: number };

export interface ObjectShape {
  readonly fields: Readonly<Record<string, Shape>>;
  readonly rest?: Shape;
  readonly maxKeys?: number;
}

export const MAX_KEPT_STRING = 4096;
const MAX_KEY_BYTES = 256;
const MAX_SCALAR_TOKEN = 64;
const DEFAULT_MAX_KEYS = 64;
const DROPPED = Symbol('dropped');

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** The JSON text in `bytes`, keeping only what `shape` names (throws Malformed on bad syntax). */
export function parseProjected(bytes: Buffer, shape: Shape, what: string): unknown {
  const reader = new Reader(bytes, what);
  reader.space();
  const value = reader.value(shape);
  reader.space();
  if (reader.pos !== bytes.length) reader.fail('text after the value');
  return value === DROPPED ? undefined : value;
}

class Reader {
  pos = 0;
  private readonly bytes: Buffer;
  private readonly what: string;

  constructor(bytes: Buffer, what: string) {
    this.bytes = bytes;
    this.what = what;
  }

  fail(why: string): never {
    throw new Malformed(`${this.what}: not JSON (${why})`);
  }

  space(): void {
    const b = this.bytes;
    while (this.pos < b.length) {
      const c = b[this.pos];
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.pos += 1;
    }
  }

  private peek(): number {
    if (this.pos >= this.bytes.length) this.fail('unexpected end');
    return this.bytes[this.pos] as number;
  }

  private expect(byte: number): void {
    if (this.peek() !== byte) this.fail(`expected '${String.fromCharCode(byte)}'`);
    this.pos += 1;
  }

  value(shape: Shape): unknown {
    const c = this.peek();
    if (c === OPEN_OBJECT) return typeof shape === 'object' && 'fields' in shape ? this.object(shape) : this.mismatch(shape, {});
    if (c === OPEN_ARRAY) return typeof shape === 'object' && 'items' in shape ? this.array(shape) : this.mismatch(shape, []);
    const scalar = this.scalar();
    if (shape === 'present') return scalar === null ? null : true;
    return scalar;
  }

  /** A container where the shape wants something else: stepped over, kept as an empty one of its kind. */
  private mismatch(shape: Shape, empty: object): unknown {
    this.skip();
    return shape === 'present' ? true : empty;
  }

  private object(shape: ObjectShape): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    let restKept = 0;
    this.expect(OPEN_OBJECT);
    this.space();
    if (this.peek() === CLOSE_OBJECT) { this.pos += 1; return out; }
    for (;;) {
      this.space();
      const key = this.key();
      this.space();
      this.expect(COLON);
      this.space();
      const own = key !== undefined && Object.hasOwn(shape.fields, key) ? shape.fields[key] : undefined;
      const sub = own ?? (key !== undefined && shape.rest !== undefined && restKept < (shape.maxKeys ?? DEFAULT_MAX_KEYS) ? shape.rest : undefined);
      if (sub === undefined) this.skip();
      else {
        if (own === undefined) restKept += 1;
        const v = this.value(sub);
        if (v !== DROPPED) Object.defineProperty(out, key as string, { value: v, enumerable: true, writable: true, configurable: true });
      }
      this.space();
      const c = this.peek();
      this.pos += 1;
      if (c === CLOSE_OBJECT) return out;
      if (c !== COMMA) this.fail("expected ',' or '}'");
    }
  }

  private array(shape: { items: Shape; max: number }): unknown[] {
    const out: unknown[] = [];
    this.expect(OPEN_ARRAY);
    this.space();
    if (this.peek() === CLOSE_ARRAY) { this.pos += 1; return out; }
    for (;;) {
      this.space();
      if (out.length < shape.max) {
        const v = this.value(shape.items);
        out.push(v === DROPPED ? undefined : v);
      } else this.skip();
      this.space();
      const c = this.peek();
      this.pos += 1;
      if (c === CLOSE_ARRAY) return out;
      if (c !== COMMA) this.fail("expected ',' or ']'");
    }
  }

  /** An object key, decoded when short enough to be one a shape names; undefined otherwise. */
  private key(): string | undefined {
    if (this.peek() !== QUOTE) this.fail('expected a key');
    const start = this.pos;
    this.stepOverString();
    return this.pos - start <= MAX_KEY_BYTES ? this.decode(start, this.pos) as string : undefined;
  }

  /** A string (bounded), number, true, false or null; a string over the bound is DROPPED. */
  private scalar(): unknown {
    const start = this.pos;
    if (this.peek() === QUOTE) {
      this.stepOverString();
      return this.pos - start - 2 > MAX_KEPT_STRING ? DROPPED : this.decode(start, this.pos);
    }
    this.stepOverToken();
    if (this.pos === start) this.fail('expected a value');
    if (this.pos - start > MAX_SCALAR_TOKEN) this.fail('a number too long');
    const v = this.decode(start, this.pos);
    if (typeof v === 'object' && v !== null) this.fail('expected a value');
    return v;
  }

  private decode(start: number, end: number): unknown {
    try {
      return JSON.parse(this.bytes.toString('utf8', start, end));
    } catch {
      return this.fail('a bad token');
    }
  }

  private stepOverString(): void {
    const b = this.bytes;
    let i = this.pos + 1;
    for (;;) {
      const q = b.indexOf(QUOTE, i);
      if (q < 0) this.fail('unterminated string');
      let slashes = 0;
      for (let j = q - 1; j > this.pos && b[j] === BACKSLASH; j--) slashes += 1;
      i = q + 1;
      if (slashes % 2 === 0) break;
    }
    this.pos = i;
  }

  private stepOverToken(): void {
    const b = this.bytes;
    while (this.pos < b.length) {
      const c = b[this.pos];
      if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || c === COLON || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) return;
      if (c === QUOTE || c === OPEN_OBJECT || c === OPEN_ARRAY) this.fail('unexpected character');
      this.pos += 1;
    }
  }

  /** Steps over one value of any kind without building it (containers by depth, no recursion). */
  private skip(): void {
    const c = this.peek();
    if (c === QUOTE) return this.stepOverString();
    if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) { this.scalar(); return; }
    let depth = 0;
    const b = this.bytes;
    while (this.pos < b.length) {
      const d = b[this.pos] as number;
      if (d === QUOTE) { this.stepOverString(); continue; }
      this.pos += 1;
      if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth += 1;
      else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) {
        depth -= 1;
        if (depth === 0) return;
      }
    }
    this.fail('unexpected end');
  }
}
