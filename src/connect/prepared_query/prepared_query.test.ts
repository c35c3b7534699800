import { describe, expect, test } from "bun:test";
import type { CheckServiceNode, PreparedQuery, PreparedQueryExecuteResult, PreparedQueryOutcome, QuerySource } from "../../model/index.ts";
import { seededRng } from "../../platform/index.ts";
import { executePreparedQuery, failoverDatacenters } from "./failover.ts";
import { executeQuery, filterServiceNodes, nearSource, orderLocalResult, shuffleNodes } from "./execute.ts";
import { evalHil, parseHil } from "./hil.ts";
import { compileSubmatchRegexp } from "./submatch.ts";
import { compileTemplate, renderTemplate } from "./template.ts";
import { parseQueryError } from "./validate.ts";

const SRC: QuerySource = { Datacenter: "dc1", Segment: "seg-a", Node: "agent1", Ip: "" };

function query(more: Partial<PreparedQuery> = {}, service: Partial<PreparedQuery["Service"]> = {}): PreparedQuery {
  return {
    ID: "8f246b77-f3e1-ff88-5b48-8ec93abf3e05", Name: "q", Session: "", Token: "",
    Template: { Type: "", Regexp: "", RemoveEmptyTags: false },
    Service: {
      Service: "web", Failover: { NearestN: 0, Datacenters: null }, OnlyPassing: false, IgnoreCheckIDs: null, Near: "",
      Tags: null, NodeMeta: null, ServiceMeta: null, Connect: false, ...service,
    },
    DNS: { TTL: "" }, CreateIndex: 1, ModifyIndex: 1,
    ...more,
  };
}
const template = (name: string, regexp: string, service: Partial<PreparedQuery["Service"]>, removeEmptyTags = false) =>
  query({ Name: name, Template: { Type: "name_prefix_match", Regexp: regexp, RemoveEmptyTags: removeEmptyTags } }, service);

function instance(node: string, o: { tags?: string[]; checks?: [string, string][]; nodeMeta?: Record<string, string>; meta?: Record<string, string> } = {}): CheckServiceNode {
  return {
    Node: { Node: node, Meta: o.nodeMeta ?? {} },
    Service: { ID: "web", Service: "web", Tags: o.tags ?? null, Meta: o.meta ?? null },
    Checks: (o.checks ?? []).map(([CheckID, Status]) => ({ Node: node, CheckID, Status })),
  } as unknown as CheckServiceNode;
}
const names = (ns: readonly CheckServiceNode[]) => ns.map((n) => n.Node.Node);

describe("parseQuery", () => {
  test.each([
    [query({ Name: "" }), "Must be bound to a session"],
    [query({ Token: "<hidden>" }), "Bad Token '<hidden>', it looks like a query definition with a redacted token was submitted"],
    [query({}, { Service: "" }), "Must provide a Service name to query"],
    [query({}, { Failover: { NearestN: -1, Datacenters: null } }), "Bad NearestN '-1', must be >= 0"],
    [query({}, { NodeMeta: { "a b": "v" } }), "Couldn't load metadata pair ('a b', 'v'): Key contains invalid characters"],
    [query({ DNS: { TTL: "soon" } }), "Bad DNS TTL 'soon': time: invalid duration soon"],
    [query({ DNS: { TTL: "-1s" } }), "DNS TTL '-1000000000', must be >=0"],
  ])("refuses %#", (q: PreparedQuery, msg: string) => expect(parseQueryError(q)).toBe(msg));

  test("accepts a session-bound or template query without a name", () => {
    expect(parseQueryError(query({ Name: "", Session: "s" }, { NodeMeta: { "consul-network-segment": "" } }))).toBeUndefined();
    expect(parseQueryError(template("", "", {}))).toBeUndefined();
  });
});

describe("HIL subset", () => {
  const scope = { vars: { "name.full": "geo-db" }, funcs: { match: { args: ["TypeInt" as const], call: ([i]: readonly (string | number)[]) => `m${i}` } } };
  test.each([
    ["plain", "plain"],
    ["${name.full}-x", "geo-db-x"],
    ["$${name.full}", "${name.full}"],
    ['${match(2)}${"!"}', "m2!"],
  ])("%s", (src: string, out: string) => expect(evalHil(parseHil(src), scope)).toEqual({ type: "TypeString", v: out }));

  test("errors", () => {
    expect(() => parseHil("${name.full")).toThrow('expected "}"');
    expect(() => parseHil("${1 + 2}")).toThrow('operator "+" is not supported');
    expect(() => evalHil(parseHil("${nope}"), scope)).toThrow("unknown variable accessed: nope");
    expect(() => evalHil(parseHil("${f(1)}"), scope)).toThrow("unknown function called: f");
    expect(() => evalHil(parseHil('${match("1")}'), scope)).toThrow("match: argument 1 should be TypeInt, got TypeString");
    expect(evalHil(parseHil("${7}"), scope)).toEqual({ type: "TypeInt", v: 7 });
  });
});

describe("templates", () => {
  test("interpolates name.full, name.prefix, name.suffix, agent.segment in every string of Service, map values included", () => {
    const t = template("geo", "", {
      Service: "${name.full}", Near: "${name.prefix}", Tags: ["${name.suffix}", "x"], NodeMeta: { seg: "${agent.segment}" },
      Failover: { NearestN: 1, Datacenters: ["dc-${name.suffix}"] }, IgnoreCheckIDs: ["${name.prefix}-chk"], ServiceMeta: { k: "v" },
    });
    const r = renderTemplate(compileTemplate(t), "geo-web", SRC);
    expect(r.Service).toEqual({
      ...t.Service, Service: "geo-web", Near: "geo", Tags: ["-web", "x"], NodeMeta: { seg: "seg-a" },
      Failover: { NearestN: 1, Datacenters: ["dc--web"] }, IgnoreCheckIDs: ["geo-chk"],
    });
    expect(t.Service.Service).toBe("${name.full}"); // the stored template is not changed
    // Matching is case-insensitive but the suffix is a case-sensitive TrimPrefix, as in Consul.
    expect(renderTemplate(compileTemplate(t), "GEO-web", SRC).Service.Tags).toEqual(["GEO-web", "x"]);
  });

  test("RemoveEmptyTags drops tags that rendered empty", () => {
    const t = template("svc", "^svc-([a-z]+)(?:-([a-z]+))?$", { Service: "${match(1)}", Tags: ["${match(2)}"] }, true);
    expect(renderTemplate(compileTemplate(t), "svc-web", SRC).Service).toMatchObject({ Service: "web", Tags: null });
    expect(renderTemplate(compileTemplate(t), "svc-web-x", SRC).Service).toMatchObject({ Service: "web", Tags: ["x"] });
    expect(renderTemplate(compileTemplate({ ...t, Template: { ...t.Template, RemoveEmptyTags: false } }), "svc-web", SRC).Service.Tags).toEqual([""]);
  });

  test("match(N) gives the regexp's groups; out of range or no match gives an empty string", () => {
    const t = template("geo-db", "^geo-db-(.*?)-([^\\-]+?)$", { Service: "mysql-${match(1)}", Tags: ["${match(2)}", "${match(0)}", "${match(3)}"] });
    const ct = compileTemplate(t);
    expect(renderTemplate(ct, "geo-db-customer-primary", SRC).Service).toMatchObject({ Service: "mysql-customer", Tags: ["primary", "geo-db-customer-primary", ""] });
    expect(renderTemplate(ct, "geo-db-a-b-c", SRC).Service).toMatchObject({ Service: "mysql-a-b", Tags: ["c", "geo-db-a-b-c", ""] });
    expect(renderTemplate(ct, "nomatch", SRC).Service).toMatchObject({ Service: "mysql-", Tags: ["", "", ""] });
  });

  test.each([
    [template("x", "", {}), "Bad Template.Type 'x'", { Type: "x" }],
    [template("x", "(", {}), "Bad Regexp: error parsing regexp: missing closing ): `(`", {}],
    [template("x", "", { Service: "${name.full" }), "Bad format '${name.full' in Service.Service: parse error at 1:12: expected \"}\"", {}],
    [template("x", "", { Tags: ["${nope}"] }), "Bad evaluation for '${nope}' in Service.Tags[0]: unknown variable accessed: nope", {}],
    [template("x", "", { Service: "${1}" }), "Expected Service.Service field to be a string, got TypeInt", {}],
  ])("compile refuses %#", (t: PreparedQuery, msg: string, tpl: Partial<PreparedQuery["Template"]>) => {
    expect(() => compileTemplate({ ...t, Template: { ...t.Template, ...tpl } })).toThrow(msg);
  });
});

describe("regexp submatches (Go's FindStringSubmatch: leftmost-first)", () => {
  test.each([
    ["(a+)(b*)", "xaab", ["aab", "aa", "b"]],
    ["(a+?)(a*)", "aaa", ["aaa", "a", "aa"]],
    ["(?U)(a+)(a*)", "aaa", ["a", "a", ""]],
    ["(a|ab)(c|bcd)", "abcd", ["abcd", "a", "bcd"]],
    ["(?P<x>b)|(c)", "cb", ["c", undefined, "c"]],
    ["(?:x)(y)?z", "xz", ["xz", undefined]],
    ["^$", "", [""]],
    ["q", "abc", null],
  ])("%s on %s", (re: string, input: string, want: (string | undefined)[] | null) => expect(compileSubmatchRegexp(re).exec(input)).toEqual(want));
});

describe("execution filters and order", () => {
  const nodes = [
    instance("a", { tags: ["Primary"], checks: [["c", "passing"]], nodeMeta: { rack: "1" }, meta: { v: "1" } }),
    instance("b", { tags: ["primary", "canary"], checks: [["c", "warning"]] }),
    instance("c", { tags: ["primary"], checks: [["c", "critical"], ["flaky", "passing"]] }),
    instance("d", { checks: [["flaky", "critical"]], nodeMeta: { rack: "1" } }),
  ];

  test("health: critical always out, warning out with OnlyPassing; IgnoreCheckIDs", () => {
    expect(names(filterServiceNodes(query().Service, nodes))).toEqual(["a", "b"]);
    expect(names(filterServiceNodes(query({}, { OnlyPassing: true }).Service, nodes))).toEqual(["a"]);
    expect(names(filterServiceNodes(query({}, { IgnoreCheckIDs: ["flaky", "c"] }).Service, nodes))).toEqual(["a", "b", "c", "d"]);
  });

  test("tags (case-insensitive, !tag excludes), NodeMeta and ServiceMeta", () => {
    expect(names(filterServiceNodes(query({}, { Tags: ["PRIMARY", "!canary"] }).Service, nodes))).toEqual(["a"]);
    expect(names(filterServiceNodes(query({}, { NodeMeta: { rack: "1" }, IgnoreCheckIDs: ["flaky"] }).Service, nodes))).toEqual(["a", "d"]);
    expect(names(filterServiceNodes(query({}, { ServiceMeta: { v: "1" } }).Service, nodes))).toEqual(["a"]);
  });

  test("shuffle is a seeded permutation; the near node moves to the front; limit cuts", () => {
    const many = ["n1", "n2", "n3", "n4", "n5", "n6"].map((n) => instance(n));
    const shuffled = names(shuffleNodes(many, () => seededRng(7).next()));
    expect([...shuffled].sort()).toEqual(names(many));
    const r = executeQuery(query(), many, "dc1");
    const rng = seededRng(3);
    const out = orderLocalResult(r, { source: { ...SRC, Node: "n4" }, limit: 3, random: () => rng.next() });
    expect(out.Nodes.length).toBe(3);
    expect(out.Nodes[0]!.Node.Node).toBe("n4");
    // A source in another datacenter is not moved to the front.
    const other = orderLocalResult(r, { source: { ...SRC, Datacenter: "dc2", Node: "n6" }, limit: 0, random: undefined });
    expect(names(other.Nodes)).toEqual(names(many));
  });

  test("a distance sort applies when the source has a coordinate; nodes without one go last", () => {
    const r = executeQuery(query(), ["x", "y", "z"].map((n) => instance(n)), "dc1");
    const rtt: Record<string, number> = { y: 1, x: 5 };
    const out = orderLocalResult(r, { source: { ...SRC, Node: "src" }, limit: 0, random: undefined, rttFrom: (n) => (n === "src" ? (o) => rtt[o] : undefined) });
    expect(names(out.Nodes)).toEqual(["y", "x", "z"]);
  });

  test("nearSource: ?near over the query's Near; _agent; _ip by node address", () => {
    const q = query({}, { Near: "_agent" });
    expect(nearSource(q, { ...SRC, Node: "", Datacenter: "" }, SRC, () => undefined)).toMatchObject({ Node: "agent1", Datacenter: "dc1" });
    expect(nearSource(q, { ...SRC, Node: "n9" }, SRC, () => undefined).Node).toBe("n9");
    expect(nearSource(query({}, { Near: "_ip" }), { ...SRC, Node: "", Ip: "10.0.0.9" }, SRC, (ip) => (ip === "10.0.0.9" ? "n9" : undefined)).Node).toBe("n9");
    expect(nearSource(query({}, { Near: "_ip" }), { ...SRC, Node: "", Ip: "" }, SRC, () => "n9").Node).toBe("");
  });
});

describe("failover", () => {
  test("NearestN first, then the listed datacenters that are known and not yet chosen", () => {
    const f = (NearestN: number, Datacenters: string[] | null) => failoverDatacenters({ NearestN, Datacenters }, ["dc2", "dc3", "dc4"]);
    expect(f(0, null)).toEqual([]);
    expect(f(2, null)).toEqual(["dc2", "dc3"]);
    expect(f(9, null)).toEqual(["dc2", "dc3", "dc4"]);
    expect(f(1, ["dc4", "dc2", "dcX", "dc4"])).toEqual(["dc2", "dc4"]);
  });

  const result = (dc: string, nodes: string[]): PreparedQueryExecuteResult =>
    ({ Service: "web", Nodes: nodes.map((n) => instance(n)), DNS: { TTL: "" }, Datacenter: dc, Failovers: 0 });
  const found = (q: PreparedQuery, r: PreparedQueryExecuteResult): PreparedQueryOutcome<PreparedQueryExecuteResult> => ({ type: "found", query: q, value: r });

  test("local results win; otherwise the datacenters in order until one has instances, counting every one asked", async () => {
    const q = query({}, { Failover: { NearestN: 1, Datacenters: ["dc4", "dc3"] } });
    const asked: string[] = [];
    const remote = async (dc: string) => {
      asked.push(dc);
      if (dc === "dc2") throw new Error("unreachable");
      return result(dc, dc === "dc3" ? ["r1"] : []);
    };
    const local = executePreparedQuery({ local: async () => found(q, result("dc1", ["l1"])), datacenters: async () => ["dc1", "dc2"], remote });
    expect((await local).type === "found" && (await local as { value: PreparedQueryExecuteResult }).value.Failovers).toBe(0);
    const out = await executePreparedQuery({ local: async () => found(q, result("dc1", [])), datacenters: async () => ["dc2", "dc1", "dc4", "dc3"], remote });
    expect(asked).toEqual(["dc2", "dc4", "dc3"]);
    expect(out).toMatchObject({ type: "found", value: { Datacenter: "dc3", Failovers: 3 } });
    expect(out.type === "found" && names(out.value.Nodes)).toEqual(["r1"]);
  });

  test("no instances anywhere: the last answer's datacenter, empty nodes; not-found passes through", async () => {
    const q = query({}, { Failover: { NearestN: 2, Datacenters: null } });
    const out = await executePreparedQuery({ local: async () => found(q, result("dc1", [])), datacenters: async () => ["dc2", "dc3"], remote: async (dc) => result(dc, []) });
    expect(out).toMatchObject({ type: "found", value: { Datacenter: "dc3", Failovers: 2, Nodes: [] } });
    const none = await executePreparedQuery({ local: async () => ({ type: "not-found" }), datacenters: async () => [], remote: async () => result("x", []) });
    expect(none).toEqual({ type: "not-found" });
  });
});
