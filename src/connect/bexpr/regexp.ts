/**
 * Go-compatible regular expressions for `matches`: the pattern is parsed with Go's RE2 syntax
 * (regexp_syntax.ts) and run as a Thompson NFA, so a match costs O(input length x pattern size) whatever the
 * pattern, as in Go. A JS RegExp would backtrack: `(a+)+$` against a 4 KB check output could stall the server.
 * Semantics follow Go's regexp.MatchString: unanchored search over code points.
 */
import type { CharMatcher } from "./regexp_class.ts";
import { parseRegexp, RegexpSyntaxError, type AssertKind, type RNode } from "./regexp_syntax.ts";

/** A compiled pattern. `test` is pure and total. */
export interface GoRegexp {
  readonly source: string;
  test(input: string): boolean;
}

/** NFA size limit (Go rejects huge programs too, with the same message). */
export const MAX_REGEXP_STATES = 10_000;

type State =
  | { readonly k: "char"; readonly m: CharMatcher; readonly out: number }
  | { k: "split"; a: number; b: number }
  | { readonly k: "assert"; readonly a: AssertKind; readonly out: number }
  | { readonly k: "match" };

/** Compiles a Go regular expression; throws RegexpSyntaxError with Go's message for an invalid one. */
export function compileGoRegexp(source: string): GoRegexp {
  // Fail fast on patterns too long to fit the state limit anyway, before building per-character matchers.
  if (source.length > 8 * MAX_REGEXP_STATES) throw new RegexpSyntaxError(`error parsing regexp: expression too large: \`${source.slice(0, 40)}...\``);
  const states: State[] = [{ k: "match" }];
  const push = (s: State): number => {
    if (states.length >= MAX_REGEXP_STATES) throw new RegexpSyntaxError(`error parsing regexp: expression too large: \`${source}\``);
    states.push(s);
    return states.length - 1;
  };
  const loop = (sub: RNode, next: number): { entry: number; body: number } => {
    const split = push({ k: "split", a: -1, b: next });
    const body = build(sub, split);
    (states[split] as { a: number }).a = body;
    return { entry: split, body };
  };
  // Builds `node` so that finishing it continues at `next`; returns its entry state.
  const build = (node: RNode, next: number): number => {
    switch (node.t) {
      case "empty":
        return next;
      case "char":
        return push({ k: "char", m: node.m, out: next });
      case "assert":
        return push({ k: "assert", a: node.a, out: next });
      case "cat": {
        let s = next;
        for (let i = node.subs.length - 1; i >= 0; i--) s = build(node.subs[i]!, s);
        return s;
      }
      case "alt": {
        let s = build(node.subs[node.subs.length - 1]!, next);
        for (let i = node.subs.length - 2; i >= 0; i--) s = push({ k: "split", a: build(node.subs[i]!, next), b: s });
        return s;
      }
      case "rep": {
        let s: number;
        if (node.max < 0) {
          if (node.min === 0) return loop(node.sub, next).entry;
          s = loop(node.sub, next).body; // x+ ; the remaining min-1 copies go in front
          for (let i = 1; i < node.min; i++) s = build(node.sub, s);
          return s;
        }
        s = next;
        for (let i = 0; i < node.max - node.min; i++) s = push({ k: "split", a: build(node.sub, s), b: next });
        for (let i = 0; i < node.min; i++) s = build(node.sub, s);
        return s;
      }
    }
  };
  const start = build(parseRegexp(source), 0);
  return { source, test: (input) => run(states, start, input) };
}

const isWord = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || (c >= 0x61 && c <= 0x7a);

function run(states: readonly State[], start: number, input: string): boolean {
  const cps = Array.from(input, (ch) => ch.codePointAt(0)!);
  const n = cps.length;
  const mark = new Int32Array(states.length).fill(-1);
  const stack: number[] = [];
  let gen = 0;
  let matched = false;
  const holds = (a: AssertKind, i: number): boolean => {
    const prev = i > 0 ? cps[i - 1]! : -1, next = i < n ? cps[i]! : -1;
    switch (a) {
      case "bot": return i === 0;
      case "eot": return i === n;
      case "bol": return i === 0 || prev === 10;
      case "eol": return i === n || next === 10;
      case "wb": return isWord(prev) !== isWord(next);
      case "nwb": return isWord(prev) === isWord(next);
    }
  };
  // Adds `s` and everything reachable from it without consuming input (at position i) to `list`.
  const add = (list: number[], s: number, i: number): void => {
    stack.push(s);
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (mark[id] === gen) continue;
      mark[id] = gen;
      const st = states[id]!;
      if (st.k === "split") stack.push(st.b, st.a);
      else if (st.k === "assert") { if (holds(st.a, i)) stack.push(st.out); }
      else if (st.k === "match") matched = true;
      else list.push(id);
    }
  };
  let clist: number[] = [];
  add(clist, start, 0);
  for (let i = 0; i < n && !matched; i++) {
    const c = cps[i]!, ch = String.fromCodePoint(c);
    const nlist: number[] = [];
    gen++;
    for (const id of clist) {
      const st = states[id] as Extract<State, { k: "char" }>;
      if (st.m(c, ch)) add(nlist, st.out, i + 1);
    }
    add(nlist, start, i + 1); // unanchored: a match may start anywhere
    clist = nlist;
  }
  return matched;
}
