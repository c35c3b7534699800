/**
 * Structure-aware JSON mutation for the fuzz suite (pure, seeded). A body is built as a tree whose
 * numbers carry their literal text, so mutations can place exact boundary literals (2^53 + 1, 2^64),
 * duplicate keys and invalid UTF-8 that JSON.stringify could never write.
 */
import type { Rng } from "../../src/platform/index.ts";

/** A JSON tree with raw number literals and raw byte strings. */
export type Tree =
  | null | boolean | string
  | { readonly num: string }
  | { readonly bytes: Uint8Array }
  /** `depth` levels of `[` (or `{"a":`) around `inner`, written iteratively (no recursion in the writer). */
  | { readonly nest: number; readonly inner: Tree; readonly arrays: boolean }
  | readonly Tree[]
  | { readonly obj: readonly (readonly [string, Tree])[] };

const enc = new TextEncoder();

/** Converts a parsed JSON value (or a plain object literal) to a tree. */
export function toTree(v: unknown): Tree {
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return { num: String(v) };
  if (Array.isArray(v)) return v.map(toTree);
  return { obj: Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, toTree(x)] as const) };
}

const isObj = (t: Tree): t is { obj: readonly (readonly [string, Tree])[] } => typeof t === "object" && t !== null && "obj" in t;

/** Writes a tree as JSON bytes (raw bytes strings are written unescaped, so they can be invalid UTF-8). */
export function render(t: Tree): Uint8Array {
  const parts: Uint8Array[] = [];
  const text = (s: string) => parts.push(enc.encode(s));
  const walk = (x: Tree): void => {
    if (x === null || typeof x === "boolean") return void text(String(x));
    if (typeof x === "string") return void text(JSON.stringify(x));
    if (Array.isArray(x)) {
      text("[");
      x.forEach((e, i) => (i && text(","), walk(e)));
      return void text("]");
    }
    if ("num" in x) return void text(x.num);
    if ("bytes" in x) return void (text('"'), parts.push(x.bytes), text('"'));
    if ("nest" in x) {
      text((x.arrays ? "[" : '{"a":').repeat(x.nest));
      walk(x.inner);
      return void text((x.arrays ? "]" : "}").repeat(x.nest));
    }
    text("{");
    x.obj.forEach(([k, v], i) => (i && text(","), text(JSON.stringify(k) + ":"), walk(v)));
    text("}");
  };
  walk(t);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.length));
  return out;
}

/** Number literals at and past every boundary a Go decoder or our validation cares about. */
export const BOUNDARY_NUMBERS = [
  "0", "-0", "-1", "1", "1.5", "-1.5", "1e3", "1E-3", "1e308", "-1e308", "1e400", "4.9e-324",
  "255", "256", "65535", "65536", "-65536", "2147483647", "2147483648", "-2147483649", "4294967295", "4294967296",
  "9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740993",
  "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
  "18446744073709551615", "18446744073709551616", "123456789012345678901234567890",
] as const;

/** Sizes of "huge" values; bounded so a batch stays fast on two cores. */
export interface MutationLimits {
  readonly maxString: number;
  readonly maxArray: number;
  readonly maxDepth: number;
  /** A mutation that would make the body larger than this is not made (past the 4 MiB JSON limit, to probe 413s). */
  readonly maxBody: number;
}
export const CI_LIMITS: MutationLimits = { maxString: 1 << 20, maxArray: 20_000, maxDepth: 20_000, maxBody: 6 << 20 };

/** The rendered size of `t`, counting no further than `cap` (so a huge tree costs no more than `cap`). */
export function sizeAtMost(t: Tree, cap: number): number {
  let n = 0;
  const walk = (x: Tree): void => {
    if (n > cap) return;
    if (x === null || typeof x === "boolean") n += 5;
    else if (typeof x === "string") n += x.length + 2;
    else if (Array.isArray(x)) for (const e of x) { n += 1; walk(e); if (n > cap) return; }
    else if ("num" in x) n += x.num.length;
    else if ("bytes" in x) n += x.bytes.length + 2;
    else if ("nest" in x) { n += 2 * x.nest; walk(x.inner); }
    else for (const [k, v] of x.obj) { n += k.length + 4; walk(v); if (n > cap) return; }
  };
  walk(t);
  return n;
}

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.int(xs.length)]!;

/** A value of some JSON type, sometimes extreme. */
function wildValue(rng: Rng, lim: MutationLimits): Tree {
  switch (rng.int(12)) {
    case 0: return null;
    case 1: return rng.int(2) === 0;
    case 2: return { num: pick(rng, BOUNDARY_NUMBERS) };
    case 3: return "x".repeat(1 + rng.int(64));
    case 4: return "é\u0000\u2028\ud800".repeat(1 + rng.int(8));
    case 5: return "a".repeat(1 + rng.int(lim.maxString));
    case 6: return Array.from({ length: rng.int(lim.maxArray) }, (_, i) => `v${i}`);
    case 7: return { obj: Array.from({ length: 1 + rng.int(200) }, (_, i) => [`k${i}`, "v"] as const) };
    case 8: return { bytes: new Uint8Array([0x61, 0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]) };
    case 9: return [];
    case 10: return { obj: [] };
    default: return "..%2F%00/../" + "n".repeat(rng.int(300));
  }
}

/** Every path to a value inside `t` (object keys and array indexes), the root included. */
function paths(t: Tree, at: readonly (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push([...at]);
  if (Array.isArray(t)) t.forEach((e, i) => paths(e, [...at, i], out));
  else if (t !== null && typeof t === "object" && isObj(t)) for (const [k, v] of t.obj) paths(v, [...at, k], out);
  return out;
}

/** `t` with the value at `path` replaced by `f(old)`; a path through a missing key changes nothing. */
function update(t: Tree, path: readonly (string | number)[], f: (old: Tree) => Tree): Tree {
  if (path.length === 0) return f(t);
  const [head, ...rest] = path;
  if (Array.isArray(t)) return t.map((e, i) => (i === head ? update(e, rest, f) : e));
  if (t !== null && typeof t === "object" && isObj(t)) return { obj: t.obj.map(([k, v]) => [k, k === head ? update(v, rest, f) : v] as const) };
  return t;
}

/** One mutation of `t`; returns the new tree and a short name of what was done (for findings). */
export function mutateTree(t: Tree, rng: Rng, lim: MutationLimits): { tree: Tree; what: string } {
  const all = paths(t);
  const target = pick(rng, all);
  const where = target.join(".") || "(root)";
  switch (rng.int(8)) {
    case 0: return { tree: update(t, target, () => wildValue(rng, lim)), what: `replace ${where}` };
    case 1: return { tree: update(t, target, () => ({ num: pick(rng, BOUNDARY_NUMBERS) })), what: `number at ${where}` };
    case 2: {
      const depth = 1 + rng.int(lim.maxDepth);
      const arrays = rng.int(2) === 0;
      return { tree: update(t, target, (inner) => ({ nest: depth, inner, arrays })), what: `nest ${where} ${depth} deep` };
    }
    case 3: return { tree: update(t, target, (old) => (isObj(old) && old.obj.length ? { obj: [...old.obj, [old.obj[0]![0], wildValue(rng, lim)]] } : old)), what: `duplicate key in ${where}` };
    case 4: return { tree: update(t, target, (old) => (isObj(old) ? { obj: old.obj.filter((_, i) => i !== rng.int(old.obj.length)) } : old)), what: `drop a field of ${where}` };
    case 5: return { tree: update(t, target, (old) => (isObj(old) ? { obj: [...old.obj, [pick(rng, ["__proto__", "constructor", "", "ID ", "id", "X".repeat(5000)]), wildValue(rng, lim)]] } : old)), what: `add a field to ${where}` };
    case 6: return { tree: update(t, target, (old) => (Array.isArray(old) ? Array.from({ length: rng.int(lim.maxArray) }, () => old[0] ?? null) : wildValue(rng, lim))), what: `grow ${where}` };
    default: return { tree: update(t, target, () => ({ bytes: rng.bytes(1 + rng.int(16)) })), what: `raw bytes at ${where}` };
  }
}

/** A mutated body: 1-3 tree mutations, sometimes then truncated or replaced by an empty body. */
export function mutateBody(seed: unknown, rng: Rng, lim: MutationLimits = CI_LIMITS): { body: Uint8Array; what: string } {
  let tree = toTree(seed);
  const whats: string[] = [];
  for (let i = 1 + rng.int(3); i > 0; i--) {
    const m = mutateTree(tree, rng, lim);
    if (sizeAtMost(m.tree, lim.maxBody) > lim.maxBody) continue;
    tree = m.tree;
    whats.push(m.what);
  }
  let body = render(tree);
  const tail = rng.int(20);
  if (tail === 0) return { body: new Uint8Array(), what: "empty body" };
  if (tail === 1) {
    body = body.subarray(0, rng.int(body.length + 1));
    whats.push("truncated");
  }
  return { body, what: whats.join(", ") };
}
