// Two small literal grammars for file headers, parsed for real rather than matched by regular
// expressions (a regex takes the first 'shape' it sees; numpy takes the last):
//   - a Python literal (the .npy header is the repr() of a dict, read by numpy with
//     ast.literal_eval): strings in either quote with escapes and implicit concatenation, ints
//     (any base, underscores, a Python 2 'L' suffix), floats, True/False/None, tuples, lists, dicts;
//   - strict JSON (the safetensors header), keeping integers exact (bigint).
// Both refuse duplicate dict keys (a file that says two things is not trusted to mean either),
// trailing garbage and nesting deeper than any header needs.

export type Literal =
  | { kind: 'str'; value: string }
  | { kind: 'int'; value: bigint }
  | { kind: 'float'; value: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'none' }
  | { kind: 'tuple' | 'list'; items: Literal[] }
  | { kind: 'dict'; entries: Map<string, Literal> };

/** A syntax problem, with the character offset where it was found. */
export class LiteralError extends Error {
  constructor(message: string, readonly at: number) {
    super(`${message} at character ${at}`);
  }
}

const MAX_DEPTH = 32;

/** How a value is described in messages: its Python / JSON kind. */
export function kindName(v: Literal): string {
  return { str: 'a string', int: 'an integer', float: 'a float', bool: 'a boolean', none: 'None', tuple: 'a tuple', list: 'a list', dict: 'a dict' }[v.kind];
}

abstract class Scanner {
  protected pos = 0;
  constructor(protected readonly text: string) {}

  protected fail(what: string): never {
    throw new LiteralError(what, this.pos);
  }

  protected peek(): string {
    return this.text[this.pos] ?? '';
  }

  protected expect(c: string): void {
    this.skipSpace();
    if (this.text[this.pos] !== c) this.fail(`expected '${c}'${this.pos >= this.text.length ? ' but the text ended' : ''}`);
    this.pos++;
  }

  protected abstract skipSpace(): void;
  protected abstract value(depth: number): Literal;

  /** The whole text as one value, followed by nothing but white space. */
  parseAll(): Literal {
    const v = this.value(0);
    this.skipSpace();
    if (this.pos < this.text.length) this.fail('unexpected text after the value');
    return v;
  }

  /** Items up to `close`, separated by commas, a trailing comma allowed when `trailing`. */
  protected sequence(close: string, depth: number, item: () => void, trailing: boolean): number {
    let count = 0;
    for (;;) {
      this.skipSpace();
      if (this.peek() === close && (count === 0 || trailing)) break;
      item();
      count++;
      this.skipSpace();
      if (this.peek() === ',') {
        this.pos++;
        continue;
      }
      if (this.peek() !== close) this.fail(`expected ',' or '${close}'`);
      break;
    }
    this.pos++;
    if (depth > MAX_DEPTH) this.fail('nested too deeply');
    return count;
  }

  protected dict(depth: number, key: () => string, close = '}'): Literal {
    const entries = new Map<string, Literal>();
    this.sequence(close, depth, () => {
      const at = this.pos;
      const k = key();
      this.expect(':');
      const v = this.value(depth + 1);
      if (entries.has(k)) throw new LiteralError(`duplicate key ${JSON.stringify(k)}`, at);
      entries.set(k, v);
    }, true);
    return { kind: 'dict', entries };
  }
}

/** A Python literal as ast.literal_eval reads it (the subset a header can hold). */
export function parsePythonLiteral(text: string): Literal {
  return new PythonScanner(text).parseAll();
}

/** Strict JSON (RFC 8259), integers kept exact, duplicate keys refused. */
export function parseJson(text: string): Literal {
  return new JsonScanner(text).parseAll();
}

class PythonScanner extends Scanner {
  protected skipSpace(): void {
    for (;;) {
      const c = this.peek();
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') this.pos++;
      else if (c === '\\' && this.text[this.pos + 1] === '\n') this.pos += 2; // explicit line joining
      else if (c === '#') while (this.pos < this.text.length && this.peek() !== '\n') this.pos++;
      else return;
    }
  }

  protected value(depth: number): Literal {
    if (depth > MAX_DEPTH) this.fail('nested too deeply');
    this.skipSpace();
    const c = this.peek();
    if (c === '{') {
      this.pos++;
      return this.dict(depth, () => {
        const at = this.pos;
        const k = this.value(depth + 1);
        if (k.kind !== 'str') throw new LiteralError(`a key is ${kindName(k)}, not a string`, at);
        return k.value;
      });
    }
    if (c === '[') {
      this.pos++;
      const items: Literal[] = [];
      this.sequence(']', depth, () => items.push(this.value(depth + 1)), true);
      return { kind: 'list', items };
    }
    if (c === '(') return this.parenthesized(depth);
    if (c === '-' || c === '+') {
      this.pos++;
      const v = this.value(depth + 1);
      if (v.kind === 'int') return { kind: 'int', value: c === '-' ? -v.value : v.value };
      if (v.kind === 'float') return { kind: 'float', value: c === '-' ? -v.value : v.value };
      this.fail(`'${c}' before ${kindName(v)}`);
    }
    if (/[0-9.]/.test(c)) return this.number();
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.pos, this.pos + 64))?.[0];
    if (word !== undefined) {
      // String prefixes: r, u, b and their pairs; anything else must be a constant.
      if (/^(r|u|b|br|rb)$/i.test(word) && (this.text[this.pos + word.length] === "'" || this.text[this.pos + word.length] === '"'))
        return this.strings();
      this.pos += word.length;
      if (word === 'True' || word === 'False') return { kind: 'bool', value: word === 'True' };
      if (word === 'None') return { kind: 'none' };
      this.pos -= word.length;
      this.fail(`'${word}' is not a literal`);
    }
    if (c === "'" || c === '"') return this.strings();
    this.fail(this.pos >= this.text.length ? 'the text ended where a value was expected' : `unexpected character ${JSON.stringify(c)}`);
  }

  /** (x) is x; (x,) and (x, y) are tuples; () is the empty tuple. */
  private parenthesized(depth: number): Literal {
    this.pos++;
    this.skipSpace();
    if (this.peek() === ')') {
      this.pos++;
      return { kind: 'tuple', items: [] };
    }
    const first = this.value(depth + 1);
    this.skipSpace();
    if (this.peek() === ')') {
      this.pos++;
      return first;
    }
    const items = [first];
    this.expect(',');
    this.sequence(')', depth, () => items.push(this.value(depth + 1)), true);
    return { kind: 'tuple', items };
  }

  private number(): Literal {
    const rest = this.text.slice(this.pos, this.pos + 4096);
    const m =
      /^0[xX](?:_?[0-9a-fA-F])+|^0[oO](?:_?[0-7])+|^0[bB](?:_?[01])+|^(?:\d(?:_?\d)*)?(?:\.(?:\d(?:_?\d)*)?)?(?:[eE][+-]?\d(?:_?\d)*)?/.exec(rest)!;
    const tok = m[0];
    if (tok === '' || tok === '.') this.fail('malformed number');
    this.pos += tok.length;
    const digits = tok.replace(/_/g, '');
    if (/^0[xXoObB]/.test(tok) || /^\d+$/.test(digits)) {
      if (/^0\d/.test(digits) && !/^0+$/.test(digits)) this.fail('an integer with a leading zero');
      if (this.peek() === 'L' || this.peek() === 'l') this.pos++; // Python 2 long, as numpy's old headers wrote
      return { kind: 'int', value: BigInt(digits) };
    }
    return { kind: 'float', value: Number(digits) };
  }

  /** One or more adjacent string literals, concatenated as Python does. */
  private strings(): Literal {
    let out = '';
    let isBytes: boolean | undefined;
    for (;;) {
      this.skipSpace();
      const prefix = /^[A-Za-z]{0,2}(?=['"])/.exec(this.text.slice(this.pos, this.pos + 3))?.[0];
      if (prefix === undefined || !/^(|r|u|b|br|rb)$/i.test(prefix)) break;
      const bytes = /b/i.test(prefix);
      if (isBytes !== undefined && bytes !== isBytes) this.fail('cannot mix bytes and str literals');
      isBytes = bytes;
      this.pos += prefix.length;
      out += this.oneString(/r/i.test(prefix));
    }
    if (isBytes) this.fail('a bytes literal where a string was expected');
    return { kind: 'str', value: out };
  }

  private oneString(raw: boolean): string {
    const q = this.peek();
    const triple = this.text.startsWith(q.repeat(3), this.pos);
    const close = triple ? q.repeat(3) : q;
    this.pos += close.length;
    let s = '';
    for (;;) {
      if (this.pos >= this.text.length) this.fail('unterminated string');
      if (this.text.startsWith(close, this.pos)) {
        this.pos += close.length;
        return s;
      }
      const c = this.text[this.pos++];
      if (c === '\n' && !triple) this.fail('a line break inside a string');
      if (c !== '\\') {
        s += c;
        continue;
      }
      const e = this.text[this.pos++] ?? '';
      if (raw) {
        s += '\\' + e; // raw strings keep the backslash (and the next character cannot end it)
        continue;
      }
      s += this.escape(e);
    }
  }

  private escape(e: string): string {
    const simple: Record<string, string> = { '\n': '', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };
    if (e in simple) return simple[e];
    const hex = (len: number) => {
      const h = this.text.slice(this.pos, this.pos + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(h)) this.fail(`a bad \\${e} escape`);
      this.pos += len;
      const cp = parseInt(h, 16);
      if (cp > 0x10ffff) this.fail('an escape beyond Unicode');
      return String.fromCodePoint(cp);
    };
    if (e === 'x') return hex(2);
    if (e === 'u') return hex(4);
    if (e === 'U') return hex(8);
    if (/[0-7]/.test(e)) {
      let o = e;
      while (o.length < 3 && /[0-7]/.test(this.peek())) o += this.text[this.pos++];
      return String.fromCharCode(parseInt(o, 8));
    }
    return '\\' + e; // Python keeps unknown escapes as they are
  }
}

class JsonScanner extends Scanner {
  protected skipSpace(): void {
    while (/^[ \t\n\r]$/.test(this.peek())) this.pos++;
  }

  protected value(depth: number): Literal {
    if (depth > MAX_DEPTH) this.fail('nested too deeply');
    this.skipSpace();
    const c = this.peek();
    if (c === '{') {
      this.pos++;
      return this.dict(depth, () => {
        this.skipSpace();
        if (this.peek() !== '"') this.fail('expected a quoted key');
        return this.string();
      }, '}');
    }
    if (c === '[') {
      this.pos++;
      const items: Literal[] = [];
      this.sequence(']', depth, () => items.push(this.value(depth + 1)), false);
      return { kind: 'list', items };
    }
    if (c === '"') return { kind: 'str', value: this.string() };
    for (const [word, v] of [['true', { kind: 'bool', value: true }], ['false', { kind: 'bool', value: false }], ['null', { kind: 'none' }]] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return v;
      }
    }
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.pos, this.pos + 4096));
    if (m) {
      this.pos += m[0].length;
      return m[1] === undefined && m[2] === undefined ? { kind: 'int', value: BigInt(m[0]) } : { kind: 'float', value: Number(m[0]) };
    }
    this.fail(this.pos >= this.text.length ? 'the text ended where a value was expected' : `unexpected character ${JSON.stringify(c)}`);
  }

  /** A JSON string, from its opening quote; strict about escapes and control characters. */
  private string(): string {
    this.pos++;
    let s = '';
    for (;;) {
      if (this.pos >= this.text.length) this.fail('unterminated string');
      const c = this.text[this.pos++];
      if (c === '"') return s;
      if (c < ' ') this.fail('a control character inside a string');
      if (c !== '\\') {
        s += c;
        continue;
      }
      const e = this.text[this.pos++] ?? '';
      const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
      if (e in simple) s += simple[e];
      else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(this.text.slice(this.pos, this.pos + 4))) {
        s += String.fromCharCode(parseInt(this.text.slice(this.pos, this.pos + 4), 16));
        this.pos += 4;
      } else this.fail('a bad escape in a string');
    }
  }
}
