/**
 * The subset of HashiCorp's HIL interpolation language that prepared query templates use
 * (hashicorp/hil as Consul 1.8's prepared_query/template.go calls it): literal text, `$${` for a literal
 * `${`, and `${expr}` where expr is a variable (`name.full`), a function call (`match(1)`), an integer or a
 * double-quoted string. Arithmetic and conditionals are not supported (a parse error says so). A template
 * made of a single interpolation keeps its value's type; otherwise values are converted to strings.
 */

/** A parsed template: literal parts and expressions, in order. */
export type HilTemplate = readonly HilPart[];
type HilPart = { readonly k: "text"; readonly text: string } | { readonly k: "expr"; readonly e: HilExpr };
type HilExpr =
  | { readonly k: "int"; readonly v: number }
  | { readonly k: "str"; readonly v: string }
  | { readonly k: "var"; readonly name: string }
  | { readonly k: "call"; readonly name: string; readonly args: readonly HilExpr[] };

/** A value during evaluation (HIL's TypeString and TypeInt). */
export type HilValue = { readonly type: "TypeString"; readonly v: string } | { readonly type: "TypeInt"; readonly v: number };

/** A function the template may call: its argument types and the callback. */
export interface HilFunction {
  readonly args: readonly HilValue["type"][];
  call(args: readonly (string | number)[]): string;
}

/** What an evaluation may use. */
export interface HilScope {
  readonly vars: Readonly<Record<string, string>>;
  readonly funcs: Readonly<Record<string, HilFunction>>;
}

/** A template that does not parse; the message says where. */
export class HilError extends Error {
  override readonly name = "HilError";
}

/** Parses `src`; throws HilError. */
export function parseHil(src: string): HilTemplate {
  const parts: HilPart[] = [];
  let text = "";
  let i = 0;
  while (i < src.length) {
    if (src.startsWith("$${", i)) {
      text += "${";
      i += 3;
    } else if (src.startsWith("${", i)) {
      if (text) parts.push({ k: "text", text });
      text = "";
      const p = new ExprParser(src, i + 2);
      const e = p.expr();
      p.skipSpace();
      if (src[p.pos] !== "}") throw new HilError(`parse error at 1:${p.pos + 1}: expected "}"`);
      parts.push({ k: "expr", e });
      i = p.pos + 1;
    } else {
      text += src[i++];
    }
  }
  if (text || parts.length === 0) parts.push({ k: "text", text });
  return parts;
}

class ExprParser {
  constructor(private readonly src: string, public pos: number) {}

  skipSpace(): void {
    while (this.pos < this.src.length && /\s/.test(this.src[this.pos]!)) this.pos++;
  }

  private fail(what: string): never {
    throw new HilError(`parse error at 1:${this.pos + 1}: ${what}`);
  }

  expr(): HilExpr {
    this.skipSpace();
    const rest = this.src.slice(this.pos);
    const int = /^[0-9]+/.exec(rest);
    if (int) {
      this.pos += int[0].length;
      this.noOperator();
      return { k: "int", v: Number(int[0]) };
    }
    if (rest.startsWith('"')) {
      let v = "";
      let j = this.pos + 1;
      for (; j < this.src.length && this.src[j] !== '"'; j++) {
        if (this.src[j] === "\\" && j + 1 < this.src.length) j++;
        v += this.src[j];
      }
      if (j >= this.src.length) this.fail("unterminated string");
      this.pos = j + 1;
      this.noOperator();
      return { k: "str", v };
    }
    const id = /^[A-Za-z_][A-Za-z0-9_.-]*/.exec(rest);
    if (!id) this.fail(rest === "" ? "unexpected end of template" : `unexpected ${JSON.stringify(rest[0])}`);
    this.pos += id[0].length;
    this.skipSpace();
    if (this.src[this.pos] !== "(") {
      this.noOperator();
      return { k: "var", name: id[0] };
    }
    this.pos++;
    const args: HilExpr[] = [];
    this.skipSpace();
    if (this.src[this.pos] === ")") this.pos++;
    else {
      for (;;) {
        args.push(this.expr());
        this.skipSpace();
        const c = this.src[this.pos++];
        if (c === ")") break;
        if (c !== ",") this.fail('expected "," or ")"');
      }
    }
    this.noOperator();
    return { k: "call", name: id[0], args };
  }

  /** Arithmetic and conditionals are outside the subset. */
  private noOperator(): void {
    this.skipSpace();
    const c = this.src[this.pos];
    if (c !== undefined && "+-*/%?<>=!&|".includes(c)) this.fail(`operator ${JSON.stringify(c)} is not supported in prepared query templates`);
  }
}

/** Evaluates a parsed template; throws HilError for an unknown variable or function, or bad arguments. */
export function evalHil(t: HilTemplate, scope: HilScope): HilValue {
  const values = t.map((p): HilValue => (p.k === "text" ? { type: "TypeString", v: p.text } : evalExpr(p.e, scope)));
  if (values.length === 1) return values[0]!;
  return { type: "TypeString", v: values.map((x) => String(x.v)).join("") };
}

function evalExpr(e: HilExpr, scope: HilScope): HilValue {
  switch (e.k) {
    case "int":
      return { type: "TypeInt", v: e.v };
    case "str":
      return { type: "TypeString", v: e.v };
    case "var": {
      if (!Object.hasOwn(scope.vars, e.name)) throw new HilError(`unknown variable accessed: ${e.name}`);
      return { type: "TypeString", v: scope.vars[e.name]! };
    }
    case "call": {
      const f = Object.hasOwn(scope.funcs, e.name) ? scope.funcs[e.name] : undefined;
      if (!f) throw new HilError(`unknown function called: ${e.name}`);
      if (e.args.length !== f.args.length) throw new HilError(`${e.name}: expected ${f.args.length} arguments, got ${e.args.length}`);
      const args = e.args.map((a, i) => {
        const v = evalExpr(a, scope);
        if (v.type !== f.args[i]) throw new HilError(`${e.name}: argument ${i + 1} should be ${f.args[i]}, got ${v.type}`);
        return v.v;
      });
      return { type: "TypeString", v: f.call(args) };
    }
  }
}
