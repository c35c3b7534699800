/**
 * hashicorp/hcl v1's own syntax tree of native HCL (`hcl/ast`, built as `hcl/parser` builds it), kept
 * for one purpose: re-printing text exactly as Consul 1.8's `hclprinter.Fprint` does (hcl_v1_print.ts),
 * which `acl.TranslateLegacyRules` answers. Unlike hcl.ts's tree it keeps each token's raw text (quotes
 * and escapes as written), byte-order positions, and the comments with the lead/line comment attachment
 * rules of hcl v1's parser, because the printer's layout depends on all three.
 *
 * Contract: call it only on text hcl.ts's parseHcl accepted (that is where syntax errors are reported,
 * with line:column); anything this port does not understand throws HclError all the same.
 */
import { HclError } from "./hcl_source.ts";

/** A position: `offset` orders positions (UTF-16 index; only compared), `line` is 1-based (0: none). */
export interface V1Pos {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
}

export type V1TokenType =
  | "ILLEGAL" | "EOF" | "COMMENT" | "IDENT" | "NUMBER" | "FLOAT" | "BOOL" | "STRING" | "HEREDOC"
  | "LBRACK" | "RBRACK" | "LBRACE" | "RBRACE" | "COMMA" | "ASSIGN" | "PERIOD" | "ADD" | "SUB";

export interface V1Token {
  readonly type: V1TokenType;
  /** The token as written: a STRING keeps its quotes and escapes. */
  readonly text: string;
  readonly pos: V1Pos;
}

export interface V1Comment {
  readonly pos: V1Pos;
  readonly text: string;
}

export interface V1CommentGroup {
  readonly list: readonly V1Comment[];
}

/** An object key; `text` may be rewritten (TranslateLegacyRules renames `key` to `key_prefix`). */
export interface V1Key {
  text: string;
  readonly type: V1TokenType;
  readonly pos: V1Pos;
}

export interface V1Item {
  readonly keys: readonly V1Key[];
  /** Where `=` was; undefined for `key "x" { ... }`. */
  readonly assign?: V1Pos;
  readonly val: V1Node;
  leadComment?: V1CommentGroup;
  lineComment?: V1CommentGroup;
}

export interface V1Object {
  readonly kind: "object";
  readonly lbrace: V1Pos;
  readonly rbrace: V1Pos;
  readonly items: readonly V1Item[];
}

export interface V1List {
  readonly kind: "list";
  readonly lbrack: V1Pos;
  readonly list: readonly V1Node[];
}

export interface V1Literal {
  readonly kind: "literal";
  readonly token: V1Token;
  leadComment?: V1CommentGroup;
  lineComment?: V1CommentGroup;
}

export type V1Node = V1Object | V1List | V1Literal;

/** A parsed file: its top-level items and every comment group, in source order. */
export interface V1File {
  readonly items: readonly V1Item[];
  readonly comments: readonly V1CommentGroup[];
}

/** The position of a node (ast.Node.Pos): a literal's token, an object's `{`, a list's `[`. */
export function nodePos(n: V1Node): V1Pos {
  return n.kind === "literal" ? n.token.pos : n.kind === "object" ? n.lbrace : n.lbrack;
}

const NO_POS: V1Pos = { offset: 0, line: 0, column: 0 };
const IDENT_START = /[\p{L}_]/u;
const IDENT = /[\p{L}\p{Nd}_.\-]*/uy;
const NUMBER = /-?[0-9][0-9A-Za-z_.+\-]*/y;
const SINGLE: Readonly<Record<string, V1TokenType>> = { "[": "LBRACK", "]": "RBRACK", "{": "LBRACE", "}": "RBRACE", ",": "COMMA", "=": "ASSIGN", "+": "ADD" };

/** hcl/scanner: tokens with their raw text, comments included. */
class Scanner {
  private i = 0;
  private line = 1;
  private column = 1;

  constructor(private readonly src: string) {}

  private advance(n: number): void {
    for (let k = 0; k < n; k++) {
      if (this.src[this.i] === "\n") {
        this.line++;
        this.column = 1;
      } else this.column++;
      this.i++;
    }
  }

  private sticky(re: RegExp): number {
    re.lastIndex = this.i;
    const m = re.exec(this.src);
    return m ? m[0].length : 0;
  }

  scan(): V1Token {
    while (/[ \t\n\r]/.test(this.src[this.i] ?? "")) this.advance(1);
    const pos: V1Pos = { offset: this.i, line: this.line, column: this.column };
    const start = this.i;
    const c = this.src[this.i];
    const tok = (type: V1TokenType): V1Token => ({ type, text: this.src.slice(start, this.i), pos });
    if (c === undefined) return { type: "EOF", text: "", pos };
    if (IDENT_START.test(c)) {
      this.advance(1);
      this.advance(this.sticky(IDENT));
      const t = tok("IDENT");
      return t.text === "true" || t.text === "false" ? { ...t, type: "BOOL" } : t;
    }
    if (/[0-9]/.test(c) || (c === "-" && /[0-9]/.test(this.src[this.i + 1] ?? ""))) {
      this.advance(this.sticky(NUMBER));
      return tok(/^-?[0-9]+$|^-?0[xX]/.test(this.src.slice(start, this.i)) ? "NUMBER" : "FLOAT");
    }
    if (c === '"') {
      this.advance(1);
      for (;;) {
        const d = this.src[this.i];
        if (d === undefined || d === "\n") throw new HclError(pos, "unterminated string");
        this.advance(d === "\\" ? 2 : 1);
        if (d === '"') return tok("STRING");
      }
    }
    if (c === "#" || (c === "/" && this.src[this.i + 1] === "/")) {
      while (this.i < this.src.length && this.src[this.i] !== "\n") this.advance(1);
      return tok("COMMENT");
    }
    if (c === "/" && this.src[this.i + 1] === "*") {
      const end = this.src.indexOf("*/", this.i + 2);
      if (end < 0) throw new HclError(pos, "unterminated comment");
      this.advance(end + 2 - this.i);
      return tok("COMMENT");
    }
    const single = SINGLE[c];
    if (single !== undefined) {
      this.advance(1);
      return tok(single);
    }
    throw new HclError(pos, `unexpected character ${JSON.stringify(c)}`);
  }
}

/** Signals the end of the input where an item could start (hcl's errEofToken). */
const EOF_ITEM = Symbol("eof");

/** hcl/parser, one token of lookahead, comments grouped and attached as hcl v1 attaches them. */
class Parser {
  private readonly sc: Scanner;
  private tok: V1Token = { type: "ILLEGAL", text: "", pos: NO_POS };
  private buffered = false;
  private readonly comments: V1CommentGroup[] = [];
  private leadComment: V1CommentGroup | undefined;
  private lineComment: V1CommentGroup | undefined;

  constructor(src: string) {
    this.sc = new Scanner(src);
  }

  file(): V1File {
    return { items: this.objectList(false), comments: this.comments };
  }

  private fail(): never {
    throw new HclError(this.tok.pos, `unexpected ${this.tok.type === "EOF" ? "end of input" : JSON.stringify(this.tok.text)}`);
  }

  private objectList(inObject: boolean): V1Item[] {
    const items: V1Item[] = [];
    for (;;) {
      if (inObject) {
        const t = this.scan();
        this.unscan();
        if (t.type === "RBRACE") break;
      }
      const item = this.objectItem();
      if (item === EOF_ITEM) break;
      items.push(item);
      if (this.scan().type !== "COMMA") this.unscan();
    }
    return items;
  }

  private consumeComment(): [V1Comment, number] {
    let endline = this.tok.pos.line;
    if (this.tok.text.startsWith("/*")) for (const ch of this.tok.text) if (ch === "\n") endline++;
    const comment = { pos: this.tok.pos, text: this.tok.text };
    this.tok = this.sc.scan();
    return [comment, endline];
  }

  private consumeCommentGroup(n: number): [V1CommentGroup, number] {
    const list: V1Comment[] = [];
    let endline = this.tok.pos.line;
    while (this.tok.type === "COMMENT" && this.tok.pos.line <= endline + n) {
      const [c, e] = this.consumeComment();
      list.push(c);
      endline = e;
    }
    const group = { list };
    this.comments.push(group);
    return [group, endline];
  }

  private objectItem(): V1Item | typeof EOF_ITEM {
    const { keys, eof } = this.objectKey();
    if (keys.length === 0 && eof) return EOF_ITEM;
    const leadComment = this.leadComment;
    this.leadComment = undefined;
    let assign: V1Pos | undefined;
    let val: V1Node;
    if (this.tok.type === "ASSIGN") {
      assign = this.tok.pos;
      val = this.object();
    } else if (this.tok.type === "LBRACE") {
      val = this.objectType();
    } else this.fail();
    const item: V1Item = { keys, ...(assign ? { assign } : {}), val, ...(leadComment ? { leadComment } : {}) };
    if (this.lineComment) {
      item.lineComment = this.lineComment;
      this.lineComment = undefined;
    }
    this.scan();
    if (keys.length > 0 && nodePos(val).line === keys[0]!.pos.line && this.lineComment) {
      item.lineComment = this.lineComment;
      this.lineComment = undefined;
    }
    this.unscan();
    return item;
  }

  private objectKey(): { keys: V1Key[]; eof: boolean } {
    const keys: V1Key[] = [];
    for (;;) {
      const t = this.scan();
      switch (t.type) {
        case "EOF":
          return { keys, eof: true };
        case "ASSIGN":
          if (keys.length !== 1) this.fail();
          return { keys, eof: false };
        case "LBRACE":
          if (keys.length === 0) this.fail();
          return { keys, eof: false };
        case "IDENT":
        case "STRING":
          keys.push({ text: t.text, type: t.type, pos: t.pos });
          break;
        default:
          this.fail();
      }
    }
  }

  private object(): V1Node {
    const t = this.scan();
    switch (t.type) {
      case "NUMBER":
      case "FLOAT":
      case "BOOL":
      case "STRING":
        return { kind: "literal", token: t };
      case "LBRACE":
        return this.objectType();
      case "LBRACK":
        return this.listType();
      default:
        return this.fail();
    }
  }

  private objectType(): V1Object {
    const lbrace = this.tok.pos;
    const items = this.objectList(true);
    if (this.scan().type !== "RBRACE") this.fail();
    return { kind: "object", lbrace, rbrace: this.tok.pos, items };
  }

  private listType(): V1List {
    const lbrack = this.tok.pos;
    const list: V1Node[] = [];
    let needComma = false;
    for (;;) {
      const t = this.scan();
      if (needComma && t.type !== "COMMA" && t.type !== "RBRACK") this.fail();
      switch (t.type) {
        case "BOOL":
        case "NUMBER":
        case "FLOAT":
        case "STRING": {
          const lit: V1Literal = { kind: "literal", token: t };
          if (this.leadComment) {
            lit.leadComment = this.leadComment;
            this.leadComment = undefined;
          }
          list.push(lit);
          needComma = true;
          break;
        }
        case "COMMA": {
          this.scan();
          const last = list[list.length - 1];
          if (this.lineComment && last?.kind === "literal") {
            last.lineComment = this.lineComment;
            this.lineComment = undefined;
          }
          this.unscan();
          needComma = false;
          break;
        }
        case "LBRACE":
          list.push(this.objectType());
          needComma = true;
          break;
        case "LBRACK":
          list.push(this.listType());
          break;
        case "RBRACK":
          return { kind: "list", lbrack, list };
        default:
          this.fail();
      }
    }
  }

  /** The next token (or the one pushed back); comment groups are collected and marked lead or line comments. */
  private scan(): V1Token {
    if (this.buffered) {
      this.buffered = false;
      return this.tok;
    }
    const prev = this.tok;
    this.tok = this.sc.scan();
    if (this.tok.type === "COMMENT") {
      let comment: V1CommentGroup | undefined;
      let endline: number;
      if (this.tok.pos.line === prev.pos.line) {
        // On the line of the previous token: not a lead comment, maybe a line comment.
        [comment, endline] = this.consumeCommentGroup(0);
        if (this.tok.pos.line !== endline) this.lineComment = comment;
      }
      endline = -1;
      while (this.tok.type === "COMMENT") [comment, endline] = this.consumeCommentGroup(1);
      // Directly above the next token: a lead comment.
      if (endline + 1 === this.tok.pos.line && this.tok.type !== "RBRACE" && this.tok.type !== "RBRACK") this.leadComment = comment;
    }
    return this.tok;
  }

  private unscan(): void {
    this.buffered = true;
  }
}

/** Parses native HCL v1 text (CRLF read as LF) into hcl v1's tree; throws HclError on what it cannot read. */
export function parseHclV1(text: string): V1File {
  return new Parser(text.replaceAll("\r\n", "\n")).file();
}
