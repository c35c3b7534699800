/**
 * Compile-time caps on a filter, so that no `?filter=` can make the server parse, compile or evaluate
 * something unbounded. go-bexpr has none of these (Consul accepts whatever fits in its 1 MB of headers);
 * each number below is far above any filter a person writes or a tool sensibly generates, and each is
 * checked before the work it protects. Evaluation cost is bounded separately, at run time (budget.ts).
 *
 * The nesting cap (parentheses and `not`) is the parser's MAX_NESTING (parser.ts); the per-pattern
 * regexp size is MAX_REGEXP_STATES (regexp.ts).
 */
import { FilterError } from "./errors.ts";
import type { Expr } from "./parser.ts";

/**
 * Longest expression, in UTF-8 bytes: 32 KiB. A long hand-written filter is a few hundred bytes; a generated
 * `Service.ID == "..." or ...` over 500 instance IDs is ~25 KB. Most proxies refuse URLs past 8-16 KB anyway.
 * Checked before parsing, so the parser (linear, but with a constant factor from its PEG fallbacks) never
 * sees more.
 */
export const MAX_FILTER_BYTES = 32 * 1024;

/**
 * Most syntax-tree nodes (each match clause, and each `and`/`or` chain and `not`, count one): 1,024. The
 * 500-ID generated filter above has 501. Every node costs at least one step per item evaluated, so this
 * bounds the fixed per-item cost of a filter.
 */
export const MAX_FILTER_NODES = 1024;

/**
 * Most NFA states over all `matches` patterns of one filter together: 10,000 (one pattern may have as many,
 * regexp.ts). A sane pattern has tens to a few hundred (`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$` has ~130),
 * so this leaves room for dozens. It bounds the work per input character: one character of a selected
 * string costs at most this many NFA steps summed over the filter's patterns.
 */
export const MAX_FILTER_REGEXP_STATES = 10_000;

/** Throws FilterError when `expression` is longer than MAX_FILTER_BYTES in UTF-8. */
export function checkExpressionSize(expression: string): void {
  if (expression.length * 3 <= MAX_FILTER_BYTES) return; // no UTF-16 unit encodes to more than 3 bytes
  const bytes = utf8Length(expression);
  if (bytes > MAX_FILTER_BYTES) {
    throw new FilterError(`filter expression is ${bytes} bytes long, more than the ${MAX_FILTER_BYTES} allowed`);
  }
}

/** Throws FilterError when the tree has more than MAX_FILTER_NODES nodes (counted without recursion). */
export function checkExpressionNodes(expr: Expr): void {
  let count = 0;
  const pending: Expr[] = [expr];
  while (pending.length > 0) {
    const e = pending.pop()!;
    if (++count > MAX_FILTER_NODES) {
      throw new FilterError(`filter expression has more than ${MAX_FILTER_NODES} clauses and operators (and, or, not)`);
    }
    if (e.kind === "not") pending.push(e.operand);
    else if (e.kind !== "match") pending.push(...e.operands);
  }
}

/** Throws FilterError when the filter's patterns together exceed MAX_FILTER_REGEXP_STATES (`total` so far). */
export function checkRegexpStates(total: number): void {
  if (total > MAX_FILTER_REGEXP_STATES) {
    throw new FilterError(`the filter's regular expressions are too large together: more than ${MAX_FILTER_REGEXP_STATES} states`);
  }
}

/** The UTF-8 length of a JS string (a lone surrogate counts 3 bytes, as TextEncoder replaces it with U+FFFD). */
function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
