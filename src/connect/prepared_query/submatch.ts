/**
 * Go's regexp.FindStringSubmatch over the Go-syntax parse tree of src/connect/bexpr (a Pike VM: leftmost-
 * first submatches, as Go's backtracker and NFA give them, in O(input x pattern) whatever the pattern, so
 * an operator's template regexp cannot stall a server). Capture groups and lazy quantifiers come from the
 * tree's `cap` nodes and a rep's `greedy: false`; a tree without them (a parser that drops them) matches
 * with every group unset and every quantifier greedy.
 */
import { parseRegexp, type RNode } from "../bexpr/regexp_syntax.ts";

/** The parse tree as this matcher reads it: RNode plus capture groups and lazy repetition. */
type SNode =
  | RNode
  | { readonly t: "cap"; readonly idx: number; readonly sub: SNode };

type Inst =
  | { readonly op: "char"; readonly m: (cp: number, ch: string) => boolean; readonly out: number }
  | { op: "split"; x: number; y: number }
  | { readonly op: "assert"; readonly a: string; readonly out: number }
  | { readonly op: "save"; readonly n: number; readonly out: number }
  | { readonly op: "match" };

/** A compiled pattern that reports submatches. */
export interface SubmatchRegexp {
  readonly source: string;
  /** The number of capture groups. */
  readonly groups: number;
  /** Go's FindStringSubmatch: [whole match, group 1, ...] ("" for a group that did not take part), or null. */
  exec(input: string): (string | undefined)[] | null;
}

/** Compiles a Go regular expression; throws RegexpSyntaxError (Go's message) for an invalid one. */
export function compileSubmatchRegexp(source: string): SubmatchRegexp {
  const tree = parseRegexp(source) as SNode;
  const prog: Inst[] = [{ op: "match" }];
  let groups = 0;
  const push = (i: Inst): number => prog.push(i) - 1;
  const build = (node: SNode, next: number): number => {
    switch (node.t) {
      case "empty":
        return next;
      case "char":
        return push({ op: "char", m: node.m, out: next });
      case "assert":
        return push({ op: "assert", a: node.a, out: next });
      case "cap": {
        groups = Math.max(groups, node.idx);
        const close = push({ op: "save", n: 2 * node.idx + 1, out: next });
        return push({ op: "save", n: 2 * node.idx, out: build(node.sub, close) });
      }
      case "cat": {
        let s = next;
        for (let i = node.subs.length - 1; i >= 0; i--) s = build(node.subs[i]!, s);
        return s;
      }
      case "alt": {
        let s = build(node.subs[node.subs.length - 1]!, next);
        for (let i = node.subs.length - 2; i >= 0; i--) s = push({ op: "split", x: build(node.subs[i]!, next), y: s });
        return s;
      }
      case "rep": {
        const greedy = (node as { greedy?: boolean }).greedy !== false;
        const choice = (body: number, out: number): Inst => (greedy ? { op: "split", x: body, y: out } : { op: "split", x: out, y: body });
        let s = next;
        if (node.max < 0) {
          const split = push({ op: "split", x: -1, y: -1 });
          const body = build(node.sub, split);
          Object.assign(prog[split]!, choice(body, next));
          s = node.min === 0 ? split : body;
          for (let i = 1; i < node.min; i++) s = build(node.sub, s);
          return s;
        }
        for (let i = 0; i < node.max - node.min; i++) s = push(choice(build(node.sub, s), next));
        for (let i = 0; i < node.min; i++) s = build(node.sub, s);
        return s;
      }
    }
  };
  const start = build(tree, 0);
  return { source, groups, exec: (input) => run(prog, start, groups, input) };
}

const isWord = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || (c >= 0x61 && c <= 0x7a);

function holds(a: string, prev: number, next: number): boolean {
  switch (a) {
    case "bot": return prev < 0;
    case "eot": return next < 0;
    case "bol": return prev < 0 || prev === 10;
    case "eol": return next < 0 || next === 10;
    case "wb": return isWord(prev) !== isWord(next);
    default: return isWord(prev) === isWord(next);
  }
}

interface Thread {
  readonly pc: number;
  readonly caps: Int32Array;
}

const codePointAt = (s: string, i: number): number => (i < s.length ? s.codePointAt(i)! : -1);

/** The Pike VM: threads in priority order; the first to match cuts every thread of lower priority. */
function run(prog: readonly Inst[], start: number, groups: number, input: string): (string | undefined)[] | null {
  const mark = new Int32Array(prog.length).fill(-1);
  let gen = 0;
  /** Adds the thread at `pc` and all it reaches without input at position `pos`, in priority order. */
  const add = (list: Thread[], pc: number, caps: Int32Array, pos: number, prev: number, next: number): void => {
    if (mark[pc] === gen) return;
    mark[pc] = gen;
    const inst = prog[pc]!;
    switch (inst.op) {
      case "split":
        add(list, inst.x, caps, pos, prev, next);
        add(list, inst.y, caps, pos, prev, next);
        return;
      case "assert":
        if (holds(inst.a, prev, next)) add(list, inst.out, caps, pos, prev, next);
        return;
      case "save": {
        const copy = caps.slice();
        copy[inst.n] = pos;
        add(list, inst.out, copy, pos, prev, next);
        return;
      }
      default:
        list.push({ pc, caps });
    }
  };
  let matched: Int32Array | null = null;
  let clist: Thread[] = [];
  let prev = -1;
  for (let pos = 0; ; ) {
    const c = codePointAt(input, pos);
    const ch = c < 0 ? "" : String.fromCodePoint(c);
    const next = pos + ch.length;
    const after = codePointAt(input, next);
    gen++;
    // Threads carried over keep their marks for this position; a new start has the lowest priority.
    for (const t of clist) mark[t.pc] = gen;
    if (matched === null) {
      const caps = new Int32Array(2 * groups + 2).fill(-1);
      caps[0] = pos;
      add(clist, start, caps, pos, prev, c);
    }
    if (clist.length === 0) break;
    const nlist: Thread[] = [];
    gen++;
    for (const t of clist) {
      const inst = prog[t.pc]!;
      if (inst.op === "match") {
        matched = t.caps.slice();
        matched[1] = pos;
        break; // lower-priority threads lose
      }
      if (inst.op === "char" && c >= 0 && inst.m(c, ch)) add(nlist, inst.out, t.caps, next, c, after);
    }
    clist = nlist;
    if (c < 0) break;
    prev = c;
    pos = next;
  }
  if (!matched) return null;
  const m = matched;
  return Array.from({ length: groups + 1 }, (_, i) => (m[2 * i]! >= 0 && m[2 * i + 1]! >= 0 ? input.slice(m[2 * i]!, m[2 * i + 1]!) : undefined));
}
