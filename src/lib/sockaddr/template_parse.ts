/**
 * The part of Go's text/template syntax that go-sockaddr templates use: text with `{{ ... }}` actions,
 * `{{-`/`-}}` trim markers, comments (slash-star ... star-slash inside the braces), and in actions pipelines of function calls with
 * string ("..." and `raw`), number and boolean arguments, `.` (all interfaces) and parenthesised
 * pipelines. Variables, fields and control actions (if, range, with...) are refused by name. Errors
 * are SockaddrTemplateError with text/template's wording where there is one.
 */

export class SockaddrTemplateError extends Error {}

export type Operand =
  | { readonly kind: "ident"; readonly name: string }
  | { readonly kind: "string"; readonly value: string; readonly text: string }
  | { readonly kind: "number"; readonly value: number; readonly text: string }
  | { readonly kind: "bool"; readonly value: boolean }
  | { readonly kind: "dot" }
  | { readonly kind: "pipe"; readonly pipe: Pipeline };

/** One stage of a pipeline; `source` is its text, for error messages. */
export interface Command {
  readonly operands: readonly Operand[];
  readonly source: string;
}
export type Pipeline = readonly Command[];
export type TemplateNode = { readonly kind: "text"; readonly text: string } | { readonly kind: "action"; readonly pipe: Pipeline };

type Token =
  | { readonly t: "|" | "(" | ")"; readonly at: number }
  | { readonly t: "operand"; readonly op: Operand; readonly at: number };

const fail = (message: string): never => {
  throw new SockaddrTemplateError(message);
};

const SPACE = /[ \t\r\n]/;
const CONTROL = new Set(["if", "else", "end", "range", "with", "define", "template", "block", "break", "continue"]);

/** Go's interpreted string escapes (strconv.Unquote). */
function unquote(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)/g, (_, e: string) => {
    const simple: Record<string, string> = { a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\\": "\\", '"': '"', "'": "'" };
    if (e.length === 1) return simple[e] ?? fail(`unknown escape sequence: \\${e}`);
    if (/^[0-7]{3}$/.test(e)) return String.fromCharCode(Number.parseInt(e, 8));
    return String.fromCodePoint(Number.parseInt(e.slice(1), 16));
  });
}

/** Reads the tokens of one action from `p`; returns them and where the action's text ends. */
function lexAction(input: string, start: number): { tokens: Token[]; end: number; trimRight: boolean } {
  const tokens: Token[] = [];
  let p = start;
  for (;;) {
    if (SPACE.test(input[p] ?? "") && input.startsWith("-}}", p + 1)) return { tokens, end: p + 4, trimRight: true };
    if (input.startsWith("}}", p)) return { tokens, end: p + 2, trimRight: false };
    if (p >= input.length) return fail("unclosed action");
    const c = input[p]!;
    if (SPACE.test(c)) {
      p++;
      continue;
    }
    const at = p;
    if (c === "|" || c === "(" || c === ")") {
      tokens.push({ t: c, at });
      p++;
    } else if (c === '"') {
      const m = /^"((?:\\.|[^"\\\n])*)"/.exec(input.slice(p)) ?? fail("unterminated quoted string");
      tokens.push({ t: "operand", op: { kind: "string", value: unquote(m[1]!), text: m[0] }, at });
      p += m[0].length;
    } else if (c === "`") {
      const end = input.indexOf("`", p + 1);
      if (end < 0) fail("unterminated raw quoted string");
      tokens.push({ t: "operand", op: { kind: "string", value: input.slice(p + 1, end), text: input.slice(p, end + 1) }, at });
      p = end + 1;
    } else if (/[0-9+-]/.test(c)) {
      const text = /^[+-]?[0-9A-Za-z_.]*/.exec(input.slice(p))![0];
      const value = Number(text.replaceAll("_", "").replace(/^([+-]?)0([0-7]+)$/, (_, s: string, o: string) => `${s}0o${o}`));
      if (text === "" || text === "+" || text === "-" || Number.isNaN(value)) fail(`bad number syntax: ${JSON.stringify(text)}`);
      tokens.push({ t: "operand", op: { kind: "number", value, text }, at });
      p += text.length;
    } else if (c === ".") {
      if (/[A-Za-z_]/.test(input[p + 1] ?? "")) fail(`field access (${/^\.\w+/.exec(input.slice(p))![0]}) is not supported in go-sockaddr templates here`);
      tokens.push({ t: "operand", op: { kind: "dot" }, at });
      p++;
    } else if (/[A-Za-z_]/.test(c)) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(input.slice(p))![0];
      if (CONTROL.has(name)) fail(`the "${name}" action is not supported in go-sockaddr templates here; write a single pipeline`);
      if (name === "nil") fail("nil is not a command");
      tokens.push({ t: "operand", op: name === "true" || name === "false" ? { kind: "bool", value: name === "true" } : { kind: "ident", name }, at });
      p += name.length;
    } else if (c === "$" || c === ":" || c === "=") {
      fail("template variables are not supported in go-sockaddr templates here; write a single pipeline");
    } else {
      fail(`unexpected ${JSON.stringify(c)} in command`);
    }
  }
}

/** Parses the tokens of one action into a pipeline; `known` says which function names exist. */
function parsePipeline(input: string, tokens: readonly Token[], stop: number, known: (name: string) => boolean): Pipeline {
  let i = 0;
  const pipeline = (): Command[] => {
    const cmds: Command[] = [];
    for (;;) {
      const from = tokens[i]?.at ?? stop;
      const operands: Operand[] = [];
      while (i < tokens.length && tokens[i]!.t !== "|" && tokens[i]!.t !== ")") {
        const tok = tokens[i++]!;
        if (tok.t === "(") {
          operands.push({ kind: "pipe", pipe: pipeline() });
          if (tokens[i]?.t !== ")") fail("unclosed left paren");
          i++;
        } else if (tok.t === "operand") {
          if (tok.op.kind === "ident" && !known(tok.op.name)) fail(`function ${JSON.stringify(tok.op.name)} not defined`);
          operands.push(tok.op);
        }
      }
      if (operands.length === 0) fail("missing value for command");
      const first = operands[0]!;
      if (cmds.length > 0 && first.kind !== "ident" && first.kind !== "pipe") fail(`non executable command in pipeline stage ${cmds.length + 1}`);
      cmds.push({ operands, source: input.slice(from, tokens[i]?.at ?? stop).trim() });
      if (tokens[i]?.t !== "|") return cmds;
      i++;
    }
  };
  const out = pipeline();
  if (i < tokens.length) fail("unexpected right paren");
  return out;
}

/** Splits a template into text and actions, applying trim markers and dropping comments. */
export function parseTemplate(input: string, known: (name: string) => boolean): TemplateNode[] {
  const nodes: TemplateNode[] = [];
  let i = 0;
  let trimNext = false;
  while (i < input.length) {
    const open = input.indexOf("{{", i);
    let text = input.slice(i, open < 0 ? input.length : open);
    if (trimNext) text = text.replace(/^[ \t\r\n]+/, "");
    if (open < 0) {
      if (text) nodes.push({ kind: "text", text });
      break;
    }
    let p = open + 2;
    if (input[p] === "-" && SPACE.test(input[p + 1] ?? "")) {
      text = text.replace(/[ \t\r\n]+$/, "");
      p += 2;
    }
    if (text) nodes.push({ kind: "text", text });
    if (input.startsWith("/*", p)) {
      const close = input.indexOf("*/", p);
      if (close < 0) fail("unclosed comment");
      const rest = input.slice(close + 2);
      const m = /^(?:[ \t\r\n]-)?}}/.exec(rest) ?? fail("comment ends before closing delimiter");
      trimNext = m[0].length > 2;
      i = close + 2 + m[0].length;
      continue;
    }
    const { tokens, end, trimRight } = lexAction(input, p);
    nodes.push({ kind: "action", pipe: parsePipeline(input, tokens, end - (trimRight ? 4 : 2), known) });
    trimNext = trimRight;
    i = end;
  }
  return nodes;
}
