/**
 * Merging the policies a token holds into one set of rules (Consul 1.8 `acl/policy_merger.go`): per
 * resource and per segment, exact and prefix rules apart, the stronger level wins (deny > write > list
 * > read); for service rules the policy and the intentions merge separately. A more specific segment
 * still overrides a shorter prefix afterwards, at lookup (authorizer.ts).
 */
import { emptyRules, intentionLevel, SCALAR_RESOURCES, SEGMENT_RESOURCES, strongerLevel, type ParsedRules, type SegmentRule } from "./rules.ts";

export function mergeRules(all: readonly ParsedRules[]): ParsedRules {
  if (all.length === 1) return all[0]!;
  const out = emptyRules();
  const scalars = out.scalars as Record<string, ParsedRules["scalars"][keyof ParsedRules["scalars"]]>;
  for (const rules of all) {
    for (const r of SCALAR_RESOURCES) {
      const level = strongerLevel(scalars[r], rules.scalars[r]);
      if (level !== undefined) scalars[r] = level;
    }
    for (const r of SEGMENT_RESOURCES) {
      for (const kind of ["exact", "prefix"] as const) {
        const into = out.segments[r][kind] as Map<string, SegmentRule>;
        for (const [segment, rule] of rules.segments[r][kind]) into.set(segment, mergeRule(into.get(segment), rule));
      }
    }
  }
  return out;
}

/** Consul fills in a service rule's intentions at parse time, so the merge compares the derived levels. */
function mergeRule(a: SegmentRule | undefined, b: SegmentRule): SegmentRule {
  if (!a) return b;
  const policy = strongerLevel(a.policy, b.policy)!;
  if (a.intentions === undefined && b.intentions === undefined) return { policy };
  return { policy, intentions: strongerLevel(intentionLevel(a), intentionLevel(b))! };
}
