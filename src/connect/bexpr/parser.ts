/**
 * Parser for go-bexpr's expression language (grammar.peg of go-bexpr v0.1.2, the version Consul 1.8 uses),
 * written as a backtracking recursive-descent parser that tries alternatives in the PEG's order and reports
 * the furthest point it could not get past, with what it expected there.
 *
 *   Input      <- OrExpr EOF
 *   OrExpr     <- AndExpr ("or" AndExpr)*          precedence: not > and > or
 *   AndExpr    <- NotExpr ("and" NotExpr)*
 *   NotExpr    <- "not" NotExpr / "(" OrExpr ")" / Match
 *   Match      <- Selector ("==" / "!=" / "contains" / "not contains" / "matches" / "not matches") Value
 *               / Selector ("is empty" / "is not empty")
 *               / Value ("in" / "not in") Selector
 *   Selector   <- Ident ("." Ident / "[" String "]")*     Ident <- [a-zA-Z][a-zA-Z0-9_]*
 *   Value      <- Selector (its dotted text) / Number / String
 *
 * Deliberate leniency (a superset: every expression go-bexpr accepts parses to the same tree): keywords need
 * not be surrounded by whitespace where the boundary is otherwise clear (`not(a == 1)`, `"x"in Tags`), and
 * `\"` may appear inside a double-quoted string (go-bexpr ends the string at any `"`).
 */
import { syntaxError } from "./errors.ts";
import { LiteralError, unquoteDouble, unquoteRaw } from "./literals.ts";

/** Match operators; `contains` parses to "in" and `not contains` to "not in", as in go-bexpr. */
export type MatchOp = "==" | "!=" | "in" | "not in" | "is empty" | "is not empty" | "matches" | "not matches";

/** A dotted/indexed path as written (`Service.Meta["x"]` is ["Service", "Meta", "x"]) and where it starts. */
export interface Selector {
  readonly path: readonly string[];
  readonly offset: number;
}

/** The syntax tree: n-ary and/or, not, and match expressions (value is the raw text, coerced later). */
export type Expr =
  | { readonly kind: "or" | "and"; readonly operands: readonly Expr[] }
  | { readonly kind: "not"; readonly operand: Expr }
  | { readonly kind: "match"; readonly selector: Selector; readonly op: MatchOp; readonly value?: string; readonly offset: number };

/**
 * Nesting limit for parentheses and `not` together, so hostile input cannot exhaust the stack: deeper input
 * is a syntax error, raised while descending. 200 is far past any hand-written filter (under 10) and a
 * generator nesting each `or` in parentheses over 100 items. Measured: the deepest filter this allows, with a
 * 199-group regexp at the bottom, parses, compiles and evaluates within 400 KB of stack (Deno
 * `--v8-flags=--stack-size=400`; V8's default is ~984 KB, JSC's main thread has several MB).
 */
export const MAX_NESTING = 200;

const VALUE_OPS: readonly (readonly [string, MatchOp])[] = [
  ["==", "=="], ["!=", "!="], ["contains", "in"], ["not contains", "not in"], ["matches", "matches"], ["not matches", "not matches"],
];
const EMPTY_OPS: readonly (readonly [string, MatchOp])[] = [["is empty", "is empty"], ["is not empty", "is not empty"]];
const IN_OPS: readonly (readonly [string, MatchOp])[] = [["in", "in"], ["not in", "not in"]];
const OPERATOR = "a match operator (==, !=, contains, not contains, matches, not matches, is empty, is not empty, in, not in)";
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?/y;

const isLetter = (c: string | undefined) => c !== undefined && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z"));
const isIdentChar = (c: string | undefined) => isLetter(c) || (c !== undefined && ((c >= "0" && c <= "9") || c === "_"));
const isSpace = (c: string | undefined) => c === " " || c === "\t" || c === "\r" || c === "\n";

/** Parses a filter expression into its syntax tree; throws FilterError (with position) on a syntax error. */
export function parseExpression(src: string): Expr {
  return new Parser(src).parse();
}

class Parser {
  private pos = 0;
  private furthest = -1;
  private expected: string[] = [];
  private depth = 0;

  constructor(private readonly src: string) {}

  parse(): Expr {
    this.ws();
    const e = this.parseOr();
    if (e) {
      this.ws();
      if (this.pos === this.src.length) return e;
      this.fail(this.pos, "end of input");
    }
    const word = this.src.slice(this.furthest).split(/[\s()]/)[0]!.slice(0, 24) || this.src[this.furthest];
    const found = this.furthest >= this.src.length ? "end of input" : JSON.stringify(word);
    throw syntaxError(this.src, this.furthest, `expected ${orList(this.expected)}, found ${found}`);
  }

  /** Records that `what` was expected at `at`; only the furthest position's expectations are kept. */
  private fail(at: number, what: string): null {
    if (at > this.furthest) {
      this.furthest = at;
      this.expected = [what];
    } else if (at === this.furthest && !this.expected.includes(what)) {
      this.expected.push(what);
    }
    return null;
  }

  private ws(): void {
    while (isSpace(this.src[this.pos])) this.pos++;
  }

  /** Consumes `word` if it is at pos as a whole word (words of a multi-word keyword separated by whitespace). */
  private keyword(words: string): boolean {
    const start = this.pos;
    for (const [i, word] of words.split(" ").entries()) {
      if (i > 0) this.ws();
      const isSymbol = !isLetter(word[0]);
      if (!this.src.startsWith(word, this.pos) || (!isSymbol && isIdentChar(this.src[this.pos + word.length]))) {
        this.pos = start;
        return false;
      }
      this.pos += word.length;
    }
    return true;
  }

  private nest(offset: number): void {
    if (++this.depth > MAX_NESTING) throw syntaxError(this.src, offset, `expression nests more than ${MAX_NESTING} levels deep`);
  }

  private parseList(kind: "or" | "and", next: () => Expr | null): Expr | null {
    const first = next();
    if (!first) return null;
    const operands = [first];
    for (;;) {
      const save = this.pos;
      this.ws();
      if (!this.keyword(kind)) {
        this.fail(this.pos, `"${kind}"`);
        this.pos = save;
        break;
      }
      this.ws();
      const operand = next();
      if (!operand) {
        this.pos = save;
        break;
      }
      operands.push(operand);
    }
    return operands.length === 1 ? first : { kind, operands };
  }

  private parseOr(): Expr | null {
    return this.parseList("or", () => this.parseAnd());
  }

  private parseAnd(): Expr | null {
    return this.parseList("and", () => this.parseNot());
  }

  private parseNot(): Expr | null {
    const start = this.pos;
    if (this.keyword("not")) {
      this.nest(start);
      this.ws();
      const operand = this.parseNot();
      this.depth--;
      if (operand) return { kind: "not", operand };
      this.pos = start; // as in the PEG, fall back to reading "not" as a selector or value
    }
    if (this.src[start] === "(") {
      this.nest(start);
      this.pos++;
      this.ws();
      const inner = this.parseOr();
      this.depth--;
      if (inner) {
        this.ws();
        if (this.src[this.pos] === ")") {
          this.pos++;
          return inner;
        }
        this.fail(this.pos, '")"');
      }
      this.pos = start;
      return null;
    }
    return this.parseMatch();
  }

  private parseMatch(): Expr | null {
    const start = this.pos;
    const c = this.src[start];
    if (!isLetter(c) && c !== '"' && c !== "`" && c !== "-" && !(c !== undefined && c >= "0" && c <= "9")) {
      return this.fail(start, "an expression");
    }
    const selector = this.parseSelector();
    if (selector) {
      this.ws();
      const opAt = this.pos;
      const op = this.operator(VALUE_OPS);
      if (op) {
        this.ws();
        const value = this.parseValue();
        if (value !== null) return { kind: "match", selector, op, value, offset: start };
      } else {
        const emptyOp = this.operator(EMPTY_OPS);
        if (emptyOp) return { kind: "match", selector, op: emptyOp, offset: start };
        this.fail(opAt, OPERATOR);
      }
      this.pos = start;
    }
    const value = this.parseValue();
    if (value !== null) {
      this.ws();
      const opAt = this.pos;
      const op = this.operator(IN_OPS);
      if (op) {
        this.ws();
        const target = this.parseSelector();
        if (target) return { kind: "match", selector: target, op, value, offset: start };
        this.fail(this.pos, "a selector");
      } else {
        this.fail(opAt, OPERATOR);
      }
    }
    this.pos = start;
    return null;
  }

  private operator(ops: readonly (readonly [string, MatchOp])[]): MatchOp | null {
    for (const [text, op] of ops) if (this.keyword(text)) return op;
    return null;
  }

  private identifier(): string | null {
    const start = this.pos;
    if (!isLetter(this.src[start])) return null;
    this.pos++;
    while (isIdentChar(this.src[this.pos])) this.pos++;
    return this.src.slice(start, this.pos);
  }

  private parseSelector(): Selector | null {
    const offset = this.pos;
    const first = this.identifier();
    if (first === null) return null;
    const path = [first];
    for (;;) {
      const c = this.src[this.pos];
      if (c === "." && isLetter(this.src[this.pos + 1])) {
        this.pos++;
        path.push(this.identifier()!);
      } else if (c === "[") {
        const open = this.pos;
        this.pos++;
        this.ws();
        const q = this.src[this.pos];
        if (q !== '"' && q !== "`") throw syntaxError(this.src, this.pos, 'invalid index: expected a quoted string after "["');
        path.push(this.parseString());
        this.ws();
        if (this.src[this.pos] !== "]") throw syntaxError(this.src, open, 'unclosed index expression: expected "]"');
        this.pos++;
      } else {
        return { path, offset };
      }
    }
  }

  /** A value's raw text: a selector's dotted path, a number's digits as written, or a string's contents. */
  private parseValue(): string | null {
    const start = this.pos;
    const c = this.src[start];
    if (isLetter(c)) return this.parseSelector()!.path.join(".");
    if (c === '"' || c === "`") return this.parseString();
    NUMBER.lastIndex = start;
    const m = NUMBER.exec(this.src);
    if (!m) return this.fail(start, "a value (a quoted string, a number or a bare word)");
    this.pos = start + m[0].length;
    const after = this.src[this.pos];
    if (after !== undefined && !isSpace(after) && after !== ")") {
      throw syntaxError(this.src, start, `invalid number literal ${JSON.stringify(this.src.slice(start, this.pos + 1))} (quote values that are not plain numbers)`);
    }
    return m[0];
  }

  private parseString(): string {
    const start = this.pos;
    const quote = this.src[start]!;
    let i = start + 1;
    while (i < this.src.length && this.src[i] !== quote) i += quote === '"' && this.src[i] === "\\" ? 2 : 1;
    if (i >= this.src.length) throw syntaxError(this.src, start, "unterminated string literal");
    const body = this.src.slice(start + 1, i);
    this.pos = i + 1;
    if (quote === "`") return unquoteRaw(body);
    try {
      return unquoteDouble(body);
    } catch (e) {
      if (e instanceof LiteralError) throw syntaxError(this.src, start + 1 + e.at, e.message);
      throw e;
    }
  }
}

function orList(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? "an expression";
  return `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

