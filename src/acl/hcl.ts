/**
 * A small, strict parser for the part of HCL v1 (hashicorp/hcl, the version Consul 1.8 decodes ACL rules
 * with) that configuration-like texts use: objects, blocks with labels, assignments, quoted strings, numbers,
 * booleans and lists, with `#`, `//` and `/* *\/` comments. Text whose first non-space character is `{`
 * is the JSON form and goes to hcl_json.ts, as `hcl.Parse` does (`lexMode` in hashicorp/hcl's decoder).
 *
 * Not supported (Consul's rules never need them): heredocs (`<<EOF`) and `${...}` interpolation, which
 * stays literal text inside a string.
 */
import { badEscape, Cursor, formatPos, HclError, MAX_DEPTH, quote, readHex, scanString } from "./hcl_source.ts";
import type { HclItem, HclKey, HclList, HclObject, HclValue, Pos, StringSyntax } from "./hcl_source.ts";
import { parseJsonObject } from "./hcl_json.ts";

export { formatPos, HclError, MAX_DEPTH, quote } from "./hcl_source.ts";
export type { HclBool, HclItem, HclKey, HclList, HclNull, HclNumber, HclObject, HclString, HclValue, Pos } from "./hcl_source.ts";

/**
 * Parses HCL v1 text (or its JSON form) into the generic tree: the file is one object whose items keep
 * source order, duplicates included. Empty text (or only comments) gives an object with no items.
 * Throws HclError (`At L:C: <reason>`) on any syntax error, nesting deeper than MAX_DEPTH included; never
 * throws anything else, for any input.
 */
export function parseHcl(text: string): HclObject {
  const first = /\S/u.exec(text);
  if (first && first[0] === "{") return parseJsonObject(text);
  return new NativeParser(text).file();
}

type TokenType = "ident" | "string" | "number" | "{" | "}" | "[" | "]" | "," | "=" | "eof";

interface Token {
  readonly type: TokenType;
  /** The identifier, the decoded string, or the number as written; "" for punctuation. */
  readonly text: string;
  readonly pos: Pos;
}

const IDENT = /[\p{L}_][\p{L}\p{Nd}_.\-]*/uy;
const NUMBER_RUN = /-?[0-9][0-9A-Za-z_.+\-]*/y;
const NUMBER = /^-?(?:0[xX][0-9a-fA-F]+|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)$/;
const PUNCTUATION = new Set(["{", "}", "[", "]", ",", "="]);
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\\": "\\", '"': '"',
};

/** Splits native HCL text into tokens, skipping whitespace and comments. */
class Lexer {
  private readonly cur: Cursor;

  constructor(text: string) {
    this.cur = new Cursor(text);
  }

  next(): Token {
    this.skipSpaceAndComments();
    const cur = this.cur;
    const pos = cur.pos();
    const c = cur.peek();
    if (c === "") return { type: "eof", text: "", pos };
    if (c === '"') return { type: "string", text: scanString(cur, pos, HCL_STRINGS), pos };
    if (PUNCTUATION.has(c)) {
      cur.advance();
      return { type: c as TokenType, text: "", pos };
    }
    if (/[0-9]/.test(c) || (c === "-" && /[0-9]/.test(cur.peek(1)))) {
      const run = cur.match(NUMBER_RUN) ?? "";
      if (!NUMBER.test(run)) throw new HclError(pos, `invalid number ${quote(run)}`);
      return { type: "number", text: run, pos };
    }
    const ident = cur.match(IDENT);
    if (ident !== undefined) return { type: "ident", text: ident, pos };
    throw new HclError(pos, `unexpected character ${cur.describeNext()}`);
  }

  private skipSpaceAndComments(): void {
    const cur = this.cur;
    for (;;) {
      const c = cur.peek();
      if (c === " " || c === "\t" || c === "\n" || c === "\r") cur.advance();
      else if (c === "#" || (c === "/" && cur.peek(1) === "/")) {
        while (!cur.done && cur.peek() !== "\n") cur.advance();
      } else if (c === "/" && cur.peek(1) === "*") {
        const pos = cur.pos();
        cur.advance();
        cur.advance();
        while (!(cur.peek() === "*" && cur.peek(1) === "/")) {
          if (cur.done) throw new HclError(pos, "unterminated comment");
          cur.advance();
        }
        cur.advance();
        cur.advance();
      } else return;
    }
  }
}

/** HCL v1 strings: escapes as Go's strconv.Unquote decodes them; a NUL character is refused (hcl/scanner). */
const HCL_STRINGS: StringSyntax = {
  forbidden: (c) => (c === "\0" ? "unexpected NUL character in string" : undefined),
  escape(cur, e, at) {
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) return simple;
    if (e === "x") return String.fromCharCode(readHex(cur, 2, at, e));
    if (e === "u" || e === "U") {
      const code = readHex(cur, e === "u" ? 4 : 8, at, e);
      if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw badEscape(at, `${e}${code.toString(16)}`);
      return String.fromCodePoint(code);
    }
    if (e >= "0" && e <= "3" && /^[0-7]{2}$/.test(cur.peek() + cur.peek(1))) {
      return String.fromCharCode(parseInt(e + cur.advance() + cur.advance(), 8));
    }
    throw badEscape(at, e);
  },
};

/** Recursive descent over the tokens, one token of lookahead. */
class NativeParser {
  private readonly lexer: Lexer;
  private tok: Token;
  private depth = 0;

  constructor(text: string) {
    this.lexer = new Lexer(text);
    this.tok = this.lexer.next();
  }

  file(): HclObject {
    const items = this.items(undefined);
    return { kind: "object", pos: { line: 1, column: 1 }, items };
  }

  private advance(): void {
    this.tok = this.lexer.next();
  }

  /** Items up to `}` (of the object opened at `open`) or, for the file, up to the end; one comma may follow each. */
  private items(open: Pos | undefined): HclItem[] {
    const items: HclItem[] = [];
    for (;;) {
      const t = this.tok;
      if (t.type === "eof") {
        if (open === undefined) return items;
        throw new HclError(t.pos, `expected "}" to close "{" at ${formatPos(open)}, found end of input`);
      }
      if (t.type === "}" && open !== undefined) return items;
      items.push(this.item());
      if (this.tok.type === ",") this.advance();
    }
  }

  /** `key = value`, `key { ... }` or `key "label" ... { ... }`. */
  private item(): HclItem {
    const keys: HclKey[] = [];
    while (this.tok.type === "ident" || this.tok.type === "string") {
      keys.push({ name: this.tok.text, pos: this.tok.pos, quoted: this.tok.type === "string" });
      this.advance();
    }
    const last = keys[keys.length - 1];
    if (last === undefined) throw new HclError(this.tok.pos, `expected a name, found ${describe(this.tok)}`);
    if (this.tok.type === "=" && keys.length === 1) {
      this.advance();
      return { keys, assign: true, value: this.value() };
    }
    if (this.tok.type === "{") return { keys, assign: false, value: this.object() };
    const expected = keys.length === 1 ? `"=" or "{"` : `"{"`;
    throw new HclError(this.tok.pos, `expected ${expected} after ${quote(last.name)}`);
  }

  private value(): HclValue {
    const t = this.tok;
    switch (t.type) {
      case "string":
        this.advance();
        return { kind: "string", pos: t.pos, value: t.text };
      case "number":
        this.advance();
        return { kind: "number", pos: t.pos, text: t.text };
      case "ident":
        if (t.text !== "true" && t.text !== "false") {
          throw new HclError(t.pos, `unquoted word ${quote(t.text)}; strings need double quotes`);
        }
        this.advance();
        return { kind: "bool", pos: t.pos, value: t.text === "true" };
      case "{":
        return this.object();
      case "[":
        return this.list();
      default:
        throw new HclError(t.pos, `expected a value, found ${describe(t)}`);
    }
  }

  private object(): HclObject {
    const pos = this.enter();
    const items = this.items(pos);
    this.leave();
    return { kind: "object", pos, items };
  }

  /** `[ v, v, ... ]`, trailing comma allowed. */
  private list(): HclList {
    const pos = this.enter();
    const elements: HclValue[] = [];
    for (let t = this.tok; t.type !== "]"; t = this.tok) {
      if (t.type === "eof") throw new HclError(t.pos, `expected "]" to close "[" at ${formatPos(pos)}, found end of input`);
      elements.push(this.value());
      const after = this.tok;
      if (after.type === ",") this.advance();
      else if (after.type !== "]") {
        throw new HclError(after.pos, `expected "," or "]" in the list opened at ${formatPos(pos)}, found ${describe(after)}`);
      }
    }
    this.leave();
    return { kind: "list", pos, elements };
  }

  /** Consumes an opening `{` or `[`, guarding the nesting depth; returns its position. */
  private enter(): Pos {
    const pos = this.tok.pos;
    if (++this.depth > MAX_DEPTH) throw new HclError(pos, `nesting deeper than ${MAX_DEPTH} levels`);
    this.advance();
    return pos;
  }

  /** Consumes the closing `}` or `]` that the caller has seen. */
  private leave(): void {
    this.depth--;
    this.advance();
  }
}

function describe(t: Token): string {
  switch (t.type) {
    case "eof":
      return "end of input";
    case "string":
      return `string ${quote(t.text)}`;
    case "number":
      return `number ${t.text}`;
    case "ident":
      return quote(t.text);
    default:
      return `"${t.type}"`;
  }
}
