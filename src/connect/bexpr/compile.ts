/**
 * compileFilter: parse, validate against a schema, and build the matcher, with go-bexpr v0.1.2's semantics
 * (the version Consul 1.8 vendors; validate.go, evaluate.go, field_config.go):
 *
 * - Selectors are validated up front: every segment must name a struct field (exact, case-sensitive) or
 *   be a map key; otherwise `Selector "Service.Foo" is not valid`.
 * - Operators per selected type: string == != in (substring) not in matches not matches, plus is empty /
 *   is not empty (a Causeway extension: v0.1.2 rejects them on strings; later go-bexpr accepts them);
 *   int/number/bool == !=; list of primitives in (membership) not in is empty is not empty; list of structs
 *   is empty is not empty; map in (key present) not in is empty is not empty; struct: none.
 * - The value is coerced once to the selected field's type (strconv rules, literals.ts); a regex is compiled
 *   once (Go syntax, linear-time engine, regexp.ts).
 * - A selector through a list applies the whole match to each element and holds if ANY element matches, the
 *   operator included: `Checks.Status != passing` means "some check is not passing", while
 *   `not Checks.Status == passing` means "no check is passing". An empty list matches nothing, even `!=`.
 * - A missing map key: ==, in, is not empty, matches are false; !=, not in, is empty, not matches are true
 *   (go-bexpr's NotPresentDisposition; v0.1.2 also answered true for `matches`, a bug fixed later).
 * - A field missing from the value (or of the wrong JS type) reads as its Go zero value: "", 0, false, empty.
 *
 * Bounds (limits.ts): the expression's length, node count and nesting, and its regexps' total size are
 * capped at compile time; evaluation charges its work to a WorkSink (budget.ts), so callers can bound it.
 */
import { UNMETERED, type WorkSink } from "./budget.ts";
import { FilterError } from "./errors.ts";
import { checkExpressionNodes, checkExpressionSize, checkRegexpStates } from "./limits.ts";
import { coerceBool, coerceFloat, coerceInt, goQuote, type Coerced } from "./literals.ts";
import { parseExpression, type Expr, type MatchOp } from "./parser.ts";
import { compileGoRegexp } from "./regexp.ts";
import { RegexpSyntaxError } from "./regexp_syntax.ts";
import { fieldOf, isPrimitive, type FieldType, type PrimitiveType, type Schema } from "./schema.ts";

/** A compiled filter: immutable, and may be used any number of times, concurrently. */
export interface Filter {
  /** The expression as given. */
  readonly expression: string;
  /** Whether `value` (a plain JSON-shaped object of the schema's type) passes the filter. Pure; never throws. */
  matches(value: unknown): boolean;
  /**
   * As `matches`, charging the work to `meter` as it goes (budget.ts); throws whatever `meter.charge`
   * throws (FilterTooExpensiveError from a WorkMeter), possibly part-way through the value.
   */
  evaluate(value: unknown, meter: WorkSink): boolean;
}

type Test = (value: unknown, meter: WorkSink) => boolean;

/** Compile-time state: the regexp states used so far, against MAX_FILTER_REGEXP_STATES. */
interface Binding {
  readonly schema: Schema;
  regexpStates: number;
}

const OP_NAMES: Readonly<Record<MatchOp, string>> = {
  "==": "Equal", "!=": "Not Equal", in: "In", "not in": "Not In",
  "is empty": "Is Empty", "is not empty": "Is Not Empty", matches: "Matches", "not matches": "Not Matches",
};
const NEGATED: ReadonlySet<MatchOp> = new Set(["!=", "not in", "is not empty", "not matches"]);
/** What a match says when a map key on its path is missing (go-bexpr's MatchOperator.NotPresentDisposition). */
const TRUE_WHEN_MISSING: ReadonlySet<MatchOp> = new Set(["!=", "not in", "is empty", "not matches"]);
const STRING_OPS: ReadonlySet<MatchOp> = new Set(Object.keys(OP_NAMES) as MatchOp[]);
const SCALAR_OPS: ReadonlySet<MatchOp> = new Set(["==", "!="]);
const CONTAINER_OPS: ReadonlySet<MatchOp> = new Set(["in", "not in", "is empty", "is not empty"]);
const EMPTY_OPS: ReadonlySet<MatchOp> = new Set(["is empty", "is not empty"]);
/** Work units per selector step on one value (a field or key lookup): measured at about twice a regexp step. */
const STEP_UNITS = 2;

/**
 * Compiles a filter expression for values described by `schema`. An empty expression matches everything
 * (as Consul treats an absent or empty `filter`). Throws FilterError, whose message suits an HTTP 400: for
 * a syntax, selector, operator, value or regexp error, and for an expression over the caps of limits.ts.
 */
export function compileFilter(expression: string, schema: Schema): Filter {
  if (expression === "") return { expression, matches: () => true, evaluate: () => true };
  checkExpressionSize(expression);
  const expr = parseExpression(expression);
  checkExpressionNodes(expr);
  const test = bind(expr, { schema, regexpStates: 0 });
  return { expression, matches: (v) => test(v, UNMETERED), evaluate: test };
}

function bind(expr: Expr, b: Binding): Test {
  switch (expr.kind) {
    case "and": {
      const tests = expr.operands.map((e) => bind(e, b));
      return (v, m) => {
        for (const t of tests) if (!t(v, m)) return false;
        return true;
      };
    }
    case "or": {
      const tests = expr.operands.map((e) => bind(e, b));
      return (v, m) => {
        for (const t of tests) if (t(v, m)) return true;
        return false;
      };
    }
    case "not": {
      const t = bind(expr.operand, b);
      return (v, m) => !t(v, m);
    }
    case "match":
      return bindMatch(expr.selector.path, expr.op, expr.value, b);
  }
}

/** One step of a resolved selector: how many list layers to fan out over, then a field or a map key. */
interface Step {
  readonly lists: number;
  readonly key: string;
  readonly isMapKey: boolean;
}

function bindMatch(path: readonly string[], op: MatchOp, raw: string | undefined, b: Binding): Test {
  const steps: Step[] = [];
  let type: FieldType = { kind: "struct", fields: b.schema };
  for (const [i, key] of path.entries()) {
    let lists = 0;
    while (!isPrimitive(type) && type.kind === "list") {
      type = type.of;
      lists++;
    }
    const next: FieldType | undefined = isPrimitive(type) ? undefined : type.kind === "map" ? type.of : type.kind === "struct" ? fieldOf(type.fields, key) : undefined;
    if (next === undefined) throw new FilterError(`Selector ${goQuote(path.slice(0, i + 1).join("."))} is not valid`);
    steps.push({ lists, key, isMapKey: !isPrimitive(type) && type.kind === "map" });
    type = next;
  }
  const selector = goQuote(path.join("."));
  const leaf = leafTest(type, op, raw, selector, b);
  const missing = TRUE_WHEN_MISSING.has(op);
  // walk: fan out over step i's lists, then `into` takes step i's field or key and walks on from step i + 1.
  const walk = (v: unknown, i: number, m: WorkSink): boolean => {
    if (i === steps.length) return leaf(v, m);
    const lists = steps[i]!.lists;
    return lists === 0 ? into(v, i, m) : anyOf(v, lists, i, m);
  };
  const into = (x: unknown, i: number, m: WorkSink): boolean => {
    m.charge(STEP_UNITS);
    const step = steps[i]!;
    const own = isRecord(x) && Object.hasOwn(x, step.key);
    if (step.isMapKey && !own) return missing;
    return walk(own ? (x as Record<string, unknown>)[step.key] : undefined, i + 1, m);
  };
  const anyOf = (v: unknown, depth: number, i: number, m: WorkSink): boolean => {
    if (!Array.isArray(v)) return false;
    for (const el of v) if (depth > 1 ? anyOf(el, depth - 1, i, m) : into(el, i, m)) return true;
    return false;
  };
  return (v, m) => walk(v, 0, m);
}

function leafTest(type: FieldType, op: MatchOp, raw: string | undefined, selector: string, b: Binding): Test {
  const allowed = isPrimitive(type)
    ? type === "string" ? STRING_OPS : SCALAR_OPS
    : type.kind === "map" ? CONTAINER_OPS
    : type.kind === "list" ? (isPrimitive(type.of) ? CONTAINER_OPS : EMPTY_OPS)
    : new Set<MatchOp>();
  if (!allowed.has(op)) throw new FilterError(`Invalid match operator ${goQuote(OP_NAMES[op])} for selector ${selector}`);
  const negate = NEGATED.has(op);
  const positive = positiveTest(type, op, raw ?? "", selector, b);
  return negate ? (v, m) => !positive(v, m) : positive;
}

/** The test for the operator's positive form (== for !=, in for not in, ...). */
function positiveTest(type: FieldType, op: MatchOp, raw: string, selector: string, b: Binding): Test {
  if (op === "is empty" || op === "is not empty") {
    if (type === "string") return (v) => typeof v !== "string" || v.length === 0;
    if (!isPrimitive(type) && type.kind === "list") return (v) => !Array.isArray(v) || v.length === 0;
    return (v) => !isRecord(v) || Object.keys(v).length === 0;
  }
  if (op === "matches" || op === "not matches") {
    try {
      const re = compileGoRegexp(raw);
      checkRegexpStates((b.regexpStates += re.size));
      return (v, m) => re.test(typeof v === "string" ? v : "", m);
    } catch (e) {
      if (e instanceof RegexpSyntaxError) throw new FilterError(`Failed to compile regular expression ${goQuote(raw)}: ${e.message}`);
      throw e;
    }
  }
  if (isPrimitive(type)) {
    const want = coerce(type, raw, selector);
    if (op === "in" || op === "not in") {
      return (v, m) => {
        const s = read("string", v) as string;
        m.charge(s.length >> 6); // a native substring scan: cheap per character, but not free on long strings
        return s.includes(want as string);
      };
    }
    return (v) => read(type, v) === want;
  }
  if (type.kind === "map") return (v) => isRecord(v) && Object.hasOwn(v, raw);
  if (type.kind === "list" && isPrimitive(type.of)) {
    const elem = type.of;
    const want = coerce(elem, raw, selector);
    return (v, m) => {
      if (!Array.isArray(v)) return false;
      m.charge(v.length);
      return v.some((el) => read(elem, el) === want);
    };
  }
  return () => false; // unreachable: leafTest allows no other operator on these types
}

function coerce(type: PrimitiveType, raw: string, selector: string): string | number | boolean {
  const c: Coerced<string | number | boolean> =
    type === "string" ? { ok: true, value: raw } : type === "bool" ? coerceBool(raw) : type === "int" ? coerceInt(raw) : coerceFloat(raw);
  if (!c.ok) throw new FilterError(`Failed to coerce value ${goQuote(raw)} for selector ${selector}: ${c.reason}`);
  return c.value;
}

/** A primitive as its schema type, with Go's zero value when absent or of another JS type. */
function read(type: PrimitiveType, v: unknown): string | number | boolean {
  if (type === "string") return typeof v === "string" ? v : "";
  if (type === "bool") return v === true;
  return typeof v === "number" ? v : 0;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
