/**
 * Intention precedence and ordering, as Consul 1.8 computes them (agent/structs/intention.go
 * UpdatePrecedence, countExact, IntentionPrecedenceSorter, String).
 */
import { INTENTION_WILDCARD } from "./types.ts";

/** The 4-tuple and action the ordering and String() look at. */
export interface IntentionTuple {
  readonly SourceNS: string;
  readonly SourceName: string;
  readonly DestinationNS: string;
  readonly DestinationName: string;
}

/**
 * Exact values in a namespace/name pair (countExact): 0 when the namespace is "*" (whatever the name),
 * 1 when only the name is "*", 2 otherwise. A wildcard namespace with an exact name is invalid and
 * counts 0, as in Consul.
 */
export function countExact(ns: string, name: string): number {
  if (ns === INTENTION_WILDCARD) return 0;
  if (name === INTENTION_WILDCARD) return 1;
  return 2;
}

/**
 * Consul's precedence (UpdatePrecedence): the destination's exactness picks the band (2 exact -> 9,
 * 1 -> 6, 0 -> 3) and each missing exact value on the source side subtracts one:
 *
 * | source \ destination | ns/name | ns/* | *\/* |
 * | ns/name              |    9    |   6  |   3  |
 * | ns/*                 |    8    |   5  |   2  |
 * | *\/*                 |    7    |   4  |   1  |
 *
 * So the destination always dominates: any exact destination beats any wildcard destination.
 */
export function intentionPrecedence(x: IntentionTuple): number {
  const max = [3, 6, 9][countExact(x.DestinationNS, x.DestinationName)]!;
  return max - (2 - countExact(x.SourceNS, x.SourceName));
}

/** Go's string comparison: by UTF-8 bytes, which is code point order (JS `<` compares UTF-16 units). */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  const ia = a[Symbol.iterator](), ib = b[Symbol.iterator]();
  for (;;) {
    const ca = ia.next(), cb = ib.next();
    if (ca.done) return cb.done ? 0 : -1;
    if (cb.done) return 1;
    const d = ca.value.codePointAt(0)! - cb.value.codePointAt(0)!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
}

/**
 * IntentionPrecedenceSorter's order: higher Precedence first, ties broken by the lexicographic
 * (case-sensitive, byte-wise) order of SourceNS, SourceName, DestinationNS, DestinationName.
 */
export function compareIntentions(a: IntentionTuple & { readonly Precedence: number }, b: IntentionTuple & { readonly Precedence: number }): number {
  if (a.Precedence !== b.Precedence) return b.Precedence - a.Precedence;
  return (
    compareGoStrings(a.SourceNS, b.SourceNS) ||
    compareGoStrings(a.SourceName, b.SourceName) ||
    compareGoStrings(a.DestinationNS, b.DestinationNS) ||
    compareGoStrings(a.DestinationName, b.DestinationName)
  );
}

/** A sorted copy, highest precedence first (the order of Consul's list and match responses). */
export function sortIntentions<T extends IntentionTuple & { readonly Precedence: number }>(intentions: readonly T[]): T[] {
  return [...intentions].sort(compareIntentions);
}

/**
 * Consul 1.8's Intention.String(), used in authorize reasons and the duplicate error:
 * "DENY default/* => default/db (ID: <id>, Precedence: 8)".
 */
export function intentionString(x: IntentionTuple & { readonly Action: string; readonly ID: string; readonly Precedence: number }): string {
  return `${x.Action.toUpperCase()} ${x.SourceNS}/${x.SourceName} => ${x.DestinationNS}/${x.DestinationName} (ID: ${x.ID}, Precedence: ${x.Precedence})`;
}
