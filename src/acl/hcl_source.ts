/**
 * The generic tree that hcl.ts (HCL v1 native syntax) and hcl_json.ts (its JSON form) produce, the one error
 * they throw, and the character cursor both scan with. Every node carries the 1-based line:column of its
 * first character; columns count Unicode code points, as hashicorp/hcl v1's scanner does (`hcl/scanner`).
 */

/** A 1-based position in the source text. */
export interface Pos {
  readonly line: number;
  readonly column: number;
}

/** Any value: an object, a list, or a literal. `null` comes only from the JSON form. */
export type HclValue = HclObject | HclList | HclString | HclNumber | HclBool | HclNull;

/** `{ ... }`, or the whole file. Items keep source order; repeated keys are all kept (HCL v1 accumulates). */
export interface HclObject {
  readonly kind: "object";
  readonly pos: Pos;
  readonly items: readonly HclItem[];
}

export interface HclList {
  readonly kind: "list";
  readonly pos: Pos;
  readonly elements: readonly HclValue[];
}

/** A quoted string, escapes already decoded. */
export interface HclString {
  readonly kind: "string";
  readonly pos: Pos;
  readonly value: string;
}

/** A number, kept as written (`1`, `-2.5e3`, `0x1f`), never converted. */
export interface HclNumber {
  readonly kind: "number";
  readonly pos: Pos;
  readonly text: string;
}

export interface HclBool {
  readonly kind: "bool";
  readonly pos: Pos;
  readonly value: boolean;
}

export interface HclNull {
  readonly kind: "null";
  readonly pos: Pos;
}

/** One key of an item: a bare identifier (`quoted: false`) or a decoded quoted string. */
export interface HclKey {
  readonly name: string;
  readonly pos: Pos;
  readonly quoted: boolean;
}

/**
 * One item of an object. `a = v` has one key and `assign: true`; a block `a "b" { ... }` has several keys,
 * `assign: false` and an object value; `a { ... }` has one key, `assign: false` and an object value.
 * In the JSON form every item has one key and `assign: true`.
 */
export interface HclItem {
  readonly keys: readonly HclKey[];
  readonly assign: boolean;
  readonly value: HclValue;
}

/** How deeply objects and lists may nest before parsing stops with an HclError. */
export const MAX_DEPTH = 32;

/** A syntax error at `pos`; `message` is `At L:C: <reason>`. The only error the parsers throw. */
export class HclError extends Error {
  constructor(readonly pos: Pos, readonly reason: string) {
    super(`At ${formatPos(pos)}: ${reason}`);
    this.name = "HclError";
  }
}

/** `L:C`, as error messages print a position. */
export function formatPos(pos: Pos): string {
  return `${pos.line}:${pos.column}`;
}

/** Quotes a name or a piece of text for an error message, cut short if long. */
export function quote(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text);
}

/** A read position in a text that keeps line and column up to date as it advances. */
export class Cursor {
  i = 0;
  private line = 1;
  private column = 1;

  constructor(readonly text: string) {}

  get done(): boolean {
    return this.i >= this.text.length;
  }

  /** The character `k` code units ahead, or "" past the end. */
  peek(k = 0): string {
    return this.text[this.i + k] ?? "";
  }

  pos(): Pos {
    return { line: this.line, column: this.column };
  }

  /** Moves past one code unit and returns it ("" at the end). A surrogate pair counts as one column. */
  advance(): string {
    const c = this.text[this.i] ?? "";
    if (c === "") return c;
    this.i++;
    if (c === "\n") {
      this.line++;
      this.column = 1;
    } else if (!(isLowSurrogate(c) && isHighSurrogate(this.text[this.i - 2] ?? ""))) {
      this.column++;
    }
    return c;
  }

  /** Advances over `sticky` (a regexp with the y flag) if it matches here, returning the text matched. */
  match(sticky: RegExp): string | undefined {
    sticky.lastIndex = this.i;
    const m = sticky.exec(this.text);
    if (!m) return undefined;
    for (let k = 0; k < m[0].length; k++) this.advance();
    return m[0];
  }

  /** The next character for an error message: `"x"`, or `end of input`. */
  describeNext(): string {
    return this.done ? "end of input" : quote(String.fromCodePoint(this.text.codePointAt(this.i) ?? 0));
  }
}

function isHighSurrogate(c: string): boolean {
  const n = c.charCodeAt(0);
  return n >= 0xd800 && n <= 0xdbff;
}

function isLowSurrogate(c: string): boolean {
  const n = c.charCodeAt(0);
  return n >= 0xdc00 && n <= 0xdfff;
}

/**
 * Reads `digits` hex digits at the cursor (just after `\u`, `\U` or `\x`) and returns their value. Throws
 * HclError at `at` (the backslash) if fewer digits follow.
 */
export function readHex(cur: Cursor, digits: number, at: Pos, escape: string): number {
  let hex = "";
  for (let k = 0; k < digits; k++) {
    if (!/^[0-9a-fA-F]$/.test(cur.peek())) throw badEscape(at, `${escape}${hex}`);
    hex += cur.advance();
  }
  return parseInt(hex, 16);
}

/** How one string syntax differs: which raw characters it refuses, and how it decodes an escape. */
export interface StringSyntax {
  /** Why the raw character `c` may not appear in a string, or undefined if it may. */
  forbidden(c: string): string | undefined;
  /** Decodes the escape whose letter `e` (never "" or a newline) was just read; `at` is the backslash. */
  escape(cur: Cursor, e: string, at: Pos): string;
}

/**
 * Reads a double-quoted string, the cursor on its opening quote at `start`, and returns it decoded. A string
 * ends on its line: a newline or the end of the text before the closing quote is `unterminated string`.
 */
export function scanString(cur: Cursor, start: Pos, syntax: StringSyntax): string {
  cur.advance();
  let out = "";
  for (;;) {
    const c = cur.peek();
    if (c === "" || c === "\n") throw new HclError(start, "unterminated string");
    const bad = syntax.forbidden(c);
    if (bad !== undefined) throw new HclError(cur.pos(), bad);
    if (c === '"') {
      cur.advance();
      return out;
    }
    if (c !== "\\") {
      out += cur.advance();
      continue;
    }
    const at = cur.pos();
    cur.advance();
    const e = cur.advance();
    if (e === "" || e === "\n") throw new HclError(start, "unterminated string");
    out += syntax.escape(cur, e, at);
  }
}

/** The error for an escape sequence a syntax does not know. */
export function badEscape(at: Pos, sequence: string): HclError {
  return new HclError(at, `invalid escape sequence ${quote(`\\${sequence}`)}`);
}
