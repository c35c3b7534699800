/**
 * Prepared query templates (Consul 1.8 agent/consul/prepared_query/template.go and walk.go): compiling
 * checks the type, parses every string of the Service block as HIL and the Regexp as Go syntax, then
 * renders once with the template's own name; rendering interpolates `${name.full}`, `${name.prefix}`,
 * `${name.suffix}`, `${match(N)}` and `${agent.segment}` into every string of the Service block (map
 * values included, keys not) and drops empty tags when RemoveEmptyTags is set.
 */
import { QUERY_TEMPLATE_NAME_PREFIX_MATCH, type PreparedQuery, type QuerySource, type ServiceQuery } from "../../model/index.ts";
import { evalHil, HilError, parseHil, type HilTemplate } from "./hil.ts";
import { compileSubmatchRegexp, type SubmatchRegexp } from "./submatch.ts";

/** A template that cannot be compiled or rendered; the message is Consul's. */
export class TemplateError extends Error {
  override readonly name = "TemplateError";
}

/** Consul's IsTemplate. */
export const isTemplate = (q: Pick<PreparedQuery, "Template">): boolean => q.Template.Type !== "";

/** A compiled template, ready to render. */
export interface CompiledTemplate {
  readonly query: PreparedQuery;
  readonly trees: ReadonlyMap<string, HilTemplate>;
  readonly re: SubmatchRegexp | undefined;
}

/** One string field of the Service block: its walk path (".Service", ".Tags[0]", ".NodeMeta[k]"), value and setter. */
interface Field {
  readonly path: string;
  readonly value: string;
  set(s: ServiceQueryDraft, v: string): void;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type ServiceQueryDraft = Mutable<Omit<ServiceQuery, "Failover" | "Tags" | "IgnoreCheckIDs" | "NodeMeta" | "ServiceMeta">> & {
  Failover: { NearestN: number; Datacenters: string[] | null };
  Tags: string[] | null;
  IgnoreCheckIDs: string[] | null;
  NodeMeta: Record<string, string> | null;
  ServiceMeta: Record<string, string> | null;
};

/** The string fields in walk.go's order (struct field order; map keys sorted, as Go's order is random). */
function fields(s: ServiceQuery): Field[] {
  const out: Field[] = [{ path: ".Service", value: s.Service, set: (d, v) => void (d.Service = v) }];
  const list = (name: string, xs: readonly string[] | null, get: (d: ServiceQueryDraft) => string[] | null) =>
    (xs ?? []).forEach((x, i) => out.push({ path: `${name}[${i}]`, value: x, set: (d, v) => void (get(d)![i] = v) }));
  const dict = (name: string, m: Readonly<Record<string, string>> | null, get: (d: ServiceQueryDraft) => Record<string, string> | null) =>
    Object.keys(m ?? {}).sort().forEach((k) => out.push({ path: `${name}[${k}]`, value: m![k]!, set: (d, v) => void (get(d)![k] = v) }));
  list(".Failover.Datacenters", s.Failover.Datacenters, (d) => d.Failover.Datacenters);
  list(".IgnoreCheckIDs", s.IgnoreCheckIDs, (d) => d.IgnoreCheckIDs);
  out.push({ path: ".Near", value: s.Near, set: (d, v) => void (d.Near = v) });
  list(".Tags", s.Tags, (d) => d.Tags);
  dict(".NodeMeta", s.NodeMeta, (d) => d.NodeMeta);
  dict(".ServiceMeta", s.ServiceMeta, (d) => d.ServiceMeta);
  return out;
}

/** Compile: throws TemplateError with Consul's text ("Bad Template.Type 'x'", "Bad Regexp: ...", "Bad format ..."). */
export function compileTemplate(query: PreparedQuery): CompiledTemplate {
  if (query.Template.Type !== QUERY_TEMPLATE_NAME_PREFIX_MATCH) throw new TemplateError(`Bad Template.Type '${query.Template.Type}'`);
  const trees = new Map<string, HilTemplate>();
  for (const f of fields(query.Service)) {
    try {
      trees.set(f.path, parseHil(f.value));
    } catch (err) {
      throw new TemplateError(`Bad format '${f.value}' in Service${f.path}: ${(err as Error).message}`);
    }
  }
  let re: SubmatchRegexp | undefined;
  if (query.Template.Regexp !== "") {
    try {
      re = compileSubmatchRegexp(query.Template.Regexp);
    } catch (err) {
      throw new TemplateError(`Bad Regexp: ${(err as Error).message}`);
    }
  }
  const ct = { query, trees, re };
  renderTemplate(ct, query.Name, { Datacenter: "", Segment: "", Node: "", Ip: "" });
  return ct;
}

/** Render: the query for `name` (as looked up), as `source` asks it; throws TemplateError on a failed evaluation. */
export function renderTemplate(ct: CompiledTemplate, name: string, source: QuerySource): PreparedQuery {
  const q = ct.query;
  const matches = ct.re?.exec(name) ?? [];
  const vars = {
    "name.full": name,
    "name.prefix": q.Name,
    "name.suffix": name.startsWith(q.Name) ? name.slice(q.Name.length) : name,
    "agent.segment": source.Segment,
  };
  const match = {
    args: ["TypeInt" as const],
    call: ([i]: readonly (string | number)[]) => (typeof i === "number" && i >= 0 && i < matches.length ? matches[i] ?? "" : ""),
  };
  const s = q.Service;
  const draft: ServiceQueryDraft = {
    ...s,
    Failover: { NearestN: s.Failover.NearestN, Datacenters: s.Failover.Datacenters && [...s.Failover.Datacenters] },
    Tags: s.Tags && [...s.Tags],
    IgnoreCheckIDs: s.IgnoreCheckIDs && [...s.IgnoreCheckIDs],
    NodeMeta: s.NodeMeta && { ...s.NodeMeta },
    ServiceMeta: s.ServiceMeta && { ...s.ServiceMeta },
  };
  for (const f of fields(s)) {
    const tree = ct.trees.get(f.path);
    if (!tree) continue;
    let v;
    try {
      v = evalHil(tree, { vars, funcs: { match } });
    } catch (err) {
      if (!(err instanceof HilError)) throw err;
      throw new TemplateError(`Bad evaluation for '${f.value}' in Service${f.path}: ${err.message}`);
    }
    if (v.type !== "TypeString") throw new TemplateError(`Expected Service${f.path} field to be a string, got ${v.type}`);
    f.set(draft, v.v);
  }
  if (q.Template.RemoveEmptyTags && draft.Tags) {
    const kept = draft.Tags.filter((t) => t !== "");
    draft.Tags = kept.length > 0 ? kept : null;
  }
  return { ...q, Service: draft };
}
