/**
 * The JSON form of HCL v1 (RFC 8259 JSON whose top level is an object), parsed into the same generic tree
 * as native HCL so one consumer reads both: every member becomes an item with one key and `assign: true`;
 * repeated member names are all kept in order, as hashicorp/hcl's JSON parser keeps them.
 */
import { badEscape, Cursor, formatPos, HclError, MAX_DEPTH, quote, readHex, scanString } from "./hcl_source.ts";
import type { HclItem, HclObject, HclValue, Pos, StringSyntax } from "./hcl_source.ts";

/**
 * Parses `text`, which must hold exactly one JSON object (surrounding whitespace allowed).
 * Throws HclError (`At L:C: <reason>`) on any syntax error or nesting deeper than MAX_DEPTH; nothing else.
 */
export function parseJsonObject(text: string): HclObject {
  const p = new JsonParser(text);
  p.space();
  if (p.cur.peek() !== "{") throw new HclError(p.cur.pos(), `expected "{", found ${p.cur.describeNext()}`);
  const obj = p.object();
  p.space();
  if (!p.cur.done) throw new HclError(p.cur.pos(), `unexpected ${p.cur.describeNext()} after the end of the JSON object`);
  return obj;
}

const JSON_NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const JSON_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t",
};

/** RFC 8259 strings: no raw control characters; `\u` escapes are UTF-16 code units (pairs join up). */
const JSON_STRINGS: StringSyntax = {
  forbidden: (c) => (c < " " ? `control character ${quote(c)} in string` : undefined),
  escape(cur, e, at) {
    const simple = JSON_ESCAPES[e];
    if (simple !== undefined) return simple;
    if (e === "u") return String.fromCharCode(readHex(cur, 4, at, e));
    throw badEscape(at, e);
  },
};

class JsonParser {
  readonly cur: Cursor;
  private depth = 0;

  constructor(text: string) {
    this.cur = new Cursor(text);
  }

  space(): void {
    for (;;) {
      const c = this.cur.peek();
      if (c === " " || c === "\t" || c === "\n" || c === "\r") this.cur.advance();
      else return;
    }
  }

  object(): HclObject {
    const pos = this.enter();
    const items: HclItem[] = [];
    this.space();
    if (this.cur.peek() === "}") return this.leave({ kind: "object", pos, items });
    for (;;) {
      this.space();
      const keyPos = this.cur.pos();
      if (this.cur.peek() !== '"') throw new HclError(keyPos, `expected a quoted member name, found ${this.cur.describeNext()}`);
      const name = scanString(this.cur, keyPos, JSON_STRINGS);
      this.space();
      if (this.cur.peek() !== ":") {
        throw new HclError(this.cur.pos(), `expected ":" after ${quote(name)}, found ${this.cur.describeNext()}`);
      }
      this.cur.advance();
      items.push({ keys: [{ name, pos: keyPos, quoted: true }], assign: true, value: this.value() });
      this.space();
      const c = this.cur.peek();
      if (c === "}") return this.leave({ kind: "object", pos, items });
      if (c !== ",") {
        throw new HclError(this.cur.pos(), `expected "," or "}" in the object opened at ${formatPos(pos)}, found ${this.cur.describeNext()}`);
      }
      this.cur.advance();
    }
  }

  private list(): HclValue {
    const pos = this.enter();
    const elements: HclValue[] = [];
    this.space();
    if (this.cur.peek() === "]") return this.leave({ kind: "list", pos, elements });
    for (;;) {
      elements.push(this.value());
      this.space();
      const c = this.cur.peek();
      if (c === "]") return this.leave({ kind: "list", pos, elements });
      if (c !== ",") {
        throw new HclError(this.cur.pos(), `expected "," or "]" in the list opened at ${formatPos(pos)}, found ${this.cur.describeNext()}`);
      }
      this.cur.advance();
    }
  }

  private value(): HclValue {
    this.space();
    const cur = this.cur;
    const pos = cur.pos();
    const c = cur.peek();
    if (c === "{") return this.object();
    if (c === "[") return this.list();
    if (c === '"') return { kind: "string", pos, value: scanString(cur, pos, JSON_STRINGS) };
    if (c === "-" || /[0-9]/.test(c)) {
      const text = cur.match(JSON_NUMBER);
      if (text === undefined || /[0-9A-Za-z_.]/.test(cur.peek())) throw new HclError(pos, "invalid number");
      return { kind: "number", pos, text };
    }
    const word = cur.match(WORD);
    if (word === "true" || word === "false") return { kind: "bool", pos, value: word === "true" };
    if (word === "null") return { kind: "null", pos };
    if (word !== undefined) throw new HclError(pos, `unquoted word ${quote(word)}; strings need double quotes`);
    throw new HclError(pos, `expected a value, found ${cur.describeNext()}`);
  }

  /** Consumes an opening `{` or `[`, guarding the nesting depth; returns its position. */
  private enter(): Pos {
    const pos = this.cur.pos();
    if (++this.depth > MAX_DEPTH) throw new HclError(pos, `nesting deeper than ${MAX_DEPTH} levels`);
    this.cur.advance();
    return pos;
  }

  /** Consumes the closing `}` or `]` at the cursor and returns `node`. */
  private leave<T>(node: T): T {
    this.depth--;
    this.cur.advance();
    return node;
  }
}
