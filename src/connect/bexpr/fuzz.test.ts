/**
 * Seeded fuzzing: random token soup, mutated valid filters and random regexes must either compile to a filter
 * whose `matches` returns a boolean without throwing, or throw FilterError; never anything else (no
 * TypeError, no RangeError from the stack, no hang). Every filter that compiles must select the same values
 * through filterList and through filterListAsync (yielding after every item) as through `matches`.
 * Failures print the seed and the input; replay with BEXPR_FUZZ_SEED=<seed>.
 */
import { expect, test } from "bun:test";
import { seededRng, type Rng } from "../../platform/index.ts";
import { CHECK_SERVICE_NODE_SCHEMA, compileFilter, FilterError, filterList, filterListAsync } from "./index.ts";

const SEEDS = process.env.BEXPR_FUZZ_SEED ? [Number(process.env.BEXPR_FUZZ_SEED)] : [1, 2, 3, 0xc0ffee];
const ITERATIONS = 4000;

const VALUES: readonly unknown[] = [
  {
    Node: { Node: "n1", Meta: { a: "b" }, TaggedAddresses: null },
    Service: { Service: "web", Port: 80, Tags: ["x", 1, null], Meta: { version: "1" }, Proxy: { Upstreams: [{ DestinationName: "db" }, null] } },
    Checks: [{ Status: "passing", ServiceTags: null }, "junk", null],
  },
  {},
  null,
  { Service: [], Checks: "nope", Node: 7 },
];

const TOKENS = [
  "Service", "Node", "Checks", "Meta", "Tags", "Port", "Status", "Proxy", "Upstreams", "DestinationName", "version", "x",
  ".", ".", "[", "]", "(", ")", "==", "!=", "=", "!", " ", " ", " ", "\n", "\t", "and", "or", "not", "in", "contains",
  "matches", "is", "empty", '"', '"', "`", "\\", "\\\"", "\\u00e9", "\\x", "0", "1", "-", "1.5", "01", "é", "😀", "__proto__",
  "constructor", "_", "$", "{", "*", "+", "?", "|", "^", "(?i)", "[a-", "\\p{", "\\d",
];

const VALID = [
  'Service.Service == web and "primary" in Service.Tags',
  "Checks.Status != passing or not Service.Meta.version matches `^1\\.[0-9]+$`",
  '(Node.Meta["rack"] == r1 or Node.Datacenter == dc2) and Service.Port == 8080',
  "Service.Proxy.Upstreams.DestinationName contains db and Service.Meta is not empty",
  'Service.Meta.quote == "say \\"hi\\"\\t!" and Service.Tags is empty',
];

function tokenSoup(rng: Rng): string {
  return Array.from({ length: 1 + rng.int(24) }, () => TOKENS[rng.int(TOKENS.length)]).join(rng.int(3) === 0 ? "" : " ");
}

function mutate(rng: Rng, s: string): string {
  let out = s;
  for (let n = 1 + rng.int(4); n > 0; n--) {
    const at = rng.int(out.length + 1);
    const op = rng.int(3);
    const piece = rng.int(2) === 0 ? TOKENS[rng.int(TOKENS.length)]! : String.fromCharCode(rng.int(128));
    if (op === 0) out = out.slice(0, at) + out.slice(at + 1 + rng.int(4));
    else if (op === 1) out = out.slice(0, at) + piece + out.slice(at);
    else out = out.slice(0, at) + piece + out.slice(at + piece.length);
  }
  return out;
}

function randomRegex(rng: Rng): string {
  const parts = ["a", ".", "*", "+", "?", "{2}", "{1,", "(", ")", "(?:", "(?i)", "(?P<n>", "[", "]", "^", "-", "\\", "\\b", "\\pL", "\\p{Greek}", "[:alpha:]", "|", "$", "\\x{41}", "\\Q", "\\E", "é"];
  return Array.from({ length: 1 + rng.int(12) }, () => parts[rng.int(parts.length)]).join("");
}

const yieldNow = () => Promise.resolve();

/** Compiles and evaluates `expr`: "compiled", "rejected" (a FilterError), or a description of what went wrong. */
async function probe(expr: string): Promise<"compiled" | "rejected" | string> {
  try {
    const f = compileFilter(expr, CHECK_SERVICE_NODE_SCHEMA);
    for (const v of VALUES) if (typeof f.matches(v) !== "boolean") return "matches returned a non-boolean";
    const want = VALUES.filter((v) => f.matches(v));
    if (!sameItems(filterList(VALUES, f), want)) return "filterList disagrees with matches";
    if (!sameItems(await filterListAsync(VALUES, f, { yield: yieldNow, sliceUnits: 1 }), want)) return "filterListAsync disagrees with matches";
    return "compiled";
  } catch (e) {
    return e instanceof FilterError ? "rejected" : `threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
  }
}

for (const seed of SEEDS) {
  test(`random and mutated expressions only ever throw FilterError, and every evaluator agrees (seed ${seed})`, async () => {
    const rng = seededRng(seed);
    let compiled = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const kind = rng.int(3);
      const expr = kind === 0 ? tokenSoup(rng) : kind === 1 ? mutate(rng, VALID[rng.int(VALID.length)]!) : `Service.Service matches \`${randomRegex(rng).replaceAll("`", "")}\``;
      const outcome = await probe(expr);
      if (outcome === "compiled") compiled++;
      else if (outcome !== "rejected") throw new Error(`seed ${seed}, iteration ${i}: ${JSON.stringify(expr)} ${outcome}`);
    }
    // The generators must reach past the parser often enough to exercise validation and evaluation.
    expect(compiled).toBeGreaterThan(ITERATIONS / 20);
  });
}

function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

test("the valid seeds of the mutator compile", () => {
  for (const expr of VALID) expect(() => compileFilter(expr, CHECK_SERVICE_NODE_SCHEMA)).not.toThrow();
});
