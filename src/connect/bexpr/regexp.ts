/**
 * Go-compatible regular expressions for `matches`: the pattern is parsed with Go's RE2 syntax
 * (regexp_syntax.ts) and run as a Thompson NFA, so a match costs O(input length x pattern size) whatever the
 * pattern, as in Go. A JS RegExp would backtrack: `(a+)+$` against a 4 KB check output could stall the server.
 * Semantics follow Go's regexp.MatchString: unanchored search over code points.
 */
import type { WorkSink } from "./budget.ts";
import type { CharMatcher } from "./regexp_class.ts";
import { parseRegexp, RegexpSyntaxError, type AssertKind, type RNode } from "./regexp_syntax.ts";

/** A compiled pattern. `test` is pure and total, unless `meter` throws (then that error propagates). */
export interface GoRegexp {
  readonly source: string;
  /** The number of NFA states: the most steps one input character can cost. */
  readonly size: number;
  /** Go's MatchString; the work is charged to `meter` as it goes (one unit per character and NFA state touched). */
  test(input: string, meter?: WorkSink): boolean;
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
      case "cap":
        return build(node.sub, next);
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
  return { source, size: states.length, test: (input, meter) => run(states, start, input, meter) };
}

const isWord = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || (c >= 0x61 && c <= 0x7a);

/** The code point at UTF-16 index i, -1 past the end (a lone surrogate is its own code point, as in Array.from). */
const codePointAt = (s: string, i: number): number => (i < s.length ? s.codePointAt(i)! : -1);

function holds(a: AssertKind, prev: number, next: number): boolean {
  switch (a) {
    case "bot": return prev < 0;
    case "eot": return next < 0;
    case "bol": return prev < 0 || prev === 10;
    case "eol": return next < 0 || next === 10;
    case "wb": return isWord(prev) !== isWord(next);
    case "nwb": return isWord(prev) === isWord(next);
  }
}

/**
 * The Thompson simulation. Work is charged to `meter` after each input character: one unit for the
 * character plus one per NFA state it touched, so a caller's budget can stop a long input part-way.
 */
function run(states: readonly State[], start: number, input: string, meter: WorkSink | undefined): boolean {
  const sim = new Simulation(states);
  let clist: number[] = [], nlist: number[] = [];
  let prev = -1, c = codePointAt(input, 0);
  sim.add(clist, start, prev, c);
  for (let i = 0; c >= 0 && !sim.matched; prev = c, c = codePointAt(input, i)) {
    const ch = String.fromCodePoint(c);
    i += ch.length;
    const next = codePointAt(input, i);
    nlist.length = 0;
    sim.gen++;
    sim.steps += 1 + clist.length;
    for (const id of clist) {
      const st = states[id] as Extract<State, { k: "char" }>;
      if (st.m(c, ch)) sim.add(nlist, st.out, c, next);
    }
    sim.add(nlist, start, c, next); // unanchored: a match may start anywhere
    [clist, nlist] = [nlist, clist];
    if (meter) {
      meter.charge(sim.steps);
      sim.steps = 0;
    }
  }
  meter?.charge(sim.steps);
  return sim.matched;
}

/** The state of one run: the per-position marks, the work counted and whether the match state was reached. */
class Simulation {
  gen = 0;
  steps = 0;
  matched = false;
  private readonly mark: Int32Array;
  private readonly stack: number[] = [];

  constructor(private readonly states: readonly State[]) {
    this.mark = new Int32Array(states.length).fill(-1);
  }

  /** Adds `s` and everything reachable from it without consuming input (between prev and next) to `list`. */
  add(list: number[], s: number, prev: number, next: number): void {
    const { stack, mark, states, gen } = this;
    let steps = 0;
    stack.push(s);
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (mark[id] === gen) continue;
      mark[id] = gen;
      steps++;
      const st = states[id]!;
      if (st.k === "split") stack.push(st.b, st.a);
      else if (st.k === "assert") { if (holds(st.a, prev, next)) stack.push(st.out); }
      else if (st.k === "match") this.matched = true;
      else list.push(id);
    }
    this.steps += steps;
  }
}
