/**
 * Write-time graph validation: Consul 1.8's validateProposedConfigEntryInGraph
 * (agent/consul/state/config_entry.go). A proposed write (or delete) is applied to a copy of the current
 * entries and every discovery chain it can affect is compiled; the first failure rejects the write, so the
 * caller writes nothing. Pure: the caller passes the current entries and applies the change only on success.
 */
import {
  validateConfigEntry,
  type ConfigEntry,
  type ConfigEntryKind,
} from "../config_entries/index.ts";
import { compileDiscoveryChain } from "./compile.ts";
import { discoveryChainSet, relatedServices } from "./entry_set.ts";

/** The placeholders Consul's testCompileDiscoveryChain compiles with. */
const VALIDATION_DC = "dc1";
const VALIDATION_TRUST_DOMAIN = "b6fc9da3-03d4-4b5a-9134-c045e9b20152.consul";

const GRAPH_KINDS: ReadonlySet<string> = new Set(["service-router", "service-splitter", "service-resolver"]);

/**
 * Validates `proposed` on its own (validateConfigEntry, throws ConfigEntryError) and then within the graph
 * formed with `entries` (throws ConfigEntryGraphError). `entries` is the current set; an entry of the same
 * Kind and Name is replaced by `proposed`.
 */
export function validateEntryInGraph(entries: readonly ConfigEntry[], proposed: ConfigEntry): void {
  validateConfigEntry(proposed);
  checkGraph(entries, proposed.Kind, proposed.Name, proposed);
}

/** Validates deleting the entry `kind`/`name` (e.g. service-defaults whose protocol a router relies on). */
export function validateDeleteInGraph(entries: readonly ConfigEntry[], kind: ConfigEntryKind, name: string): void {
  checkGraph(entries, kind, name, undefined);
}

function checkGraph(entries: readonly ConfigEntry[], kind: ConfigEntryKind, name: string, next: ConfigEntry | undefined): void {
  if (kind === "proxy-defaults" && name !== "global") return;
  const speculative = entries.filter((e) => !(e.Kind === kind && e.Name === name));
  if (next !== undefined) speculative.push(next);
  const set = discoveryChainSet(speculative);
  for (const chain of chainsToCheck(speculative, entries, kind, name)) {
    compileDiscoveryChain({
      serviceName: chain,
      evaluateInNamespace: "default",
      evaluateInDatacenter: VALIDATION_DC,
      evaluateInTrustDomain: VALIDATION_TRUST_DOMAIN,
      useInDatacenter: VALIDATION_DC,
      entries: set,
    });
  }
}

/**
 * proxy-defaults "global" affects every chain that has a router, splitter or resolver. Any other entry
 * affects its own chain and every chain that sends traffic to it. Consul follows only direct links (the
 * state store's "link" index); Causeway follows them transitively, so a redirect two hops away is checked
 * too. Links are taken from the entries both before and after the change. Sorted for determinism.
 */
function chainsToCheck(after: readonly ConfigEntry[], before: readonly ConfigEntry[], kind: ConfigEntryKind, name: string): string[] {
  const out = new Set<string>();
  if (kind === "proxy-defaults") {
    for (const e of after) if (GRAPH_KINDS.has(e.Kind)) out.add(e.Name);
    return [...out].sort();
  }
  const linkedFrom = new Map<string, Set<string>>();
  for (const e of [...before, ...after]) {
    if (!GRAPH_KINDS.has(e.Kind)) continue;
    for (const svc of relatedServices(e)) {
      if (!linkedFrom.has(svc)) linkedFrom.set(svc, new Set());
      linkedFrom.get(svc)!.add(e.Name);
    }
  }
  const todo = [name];
  for (let svc = todo.pop(); svc !== undefined; svc = todo.pop()) {
    if (out.has(svc)) continue;
    out.add(svc);
    for (const from of linkedFrom.get(svc) ?? []) todo.push(from);
  }
  return [...out].sort();
}
