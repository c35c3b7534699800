import { describe, expect, test } from "bun:test";
import type { ListenerConfig } from "./config_types.ts";
import { compileChains, listenerMatcher, type ServerNamed } from "./sni_match.ts";

interface Chain extends ServerNamed {
  readonly id: string;
}
const chain = (id: string, ...serverNames: string[]): Chain => ({ id, serverNames });

function matcherOf(...chains: Chain[]) {
  const c = compileChains(chains);
  if (!c.ok) throw new Error(c.error);
  return (sni: string | undefined) => c.matcher.match(sni)?.id;
}

describe("server name matching", () => {
  const match = matcherOf(
    chain("exact", "www.example.com", "api.example.com"),
    chain("wild-example", "*.example.com"),
    chain("wild-deep", "*.dc2.internal.example.com"),
    chain("wild-com", "*.com"),
    chain("catch-all"),
  );

  test("an exact name beats every wildcard", () => {
    expect(match("www.example.com")).toBe("exact");
    expect(match("api.example.com")).toBe("exact");
  });

  test("the longest matching wildcard suffix wins, whatever the chain order", () => {
    expect(match("db.dc2.internal.example.com")).toBe("wild-deep");
    expect(match("a.b.dc2.internal.example.com")).toBe("wild-deep");
    expect(match("other.example.com")).toBe("wild-example");
    expect(match("x.y.example.com")).toBe("wild-example");
    expect(match("example.com")).toBe("wild-com");
    expect(match("foo.org")).toBe("catch-all");
  });

  test("a wildcard needs at least one character before its suffix", () => {
    const m = matcherOf(chain("w", "*.example.com"), chain("all"));
    expect(m("example.com")).toBe("all");
    expect(m(".example.com")).toBe("all");
    expect(m("a.example.com")).toBe("w");
    expect(m("a.example.com.")).toBe("all");
  });

  test("case-insensitive on both sides", () => {
    const m = matcherOf(chain("e", "WWW.Example.COM"), chain("w", "*.Internal.Consul"));
    expect(m("www.example.com")).toBe("e");
    expect(m("WwW.eXample.com")).toBe("e");
    expect(m("DB.internal.consul")).toBe("w");
  });

  test("no SNI (undefined or empty) takes only the catch-all", () => {
    expect(match(undefined)).toBe("catch-all");
    expect(match("")).toBe("catch-all");
    const noCatchAll = matcherOf(chain("e", "a.b"), chain("w", "*.b"));
    expect(noCatchAll(undefined)).toBeUndefined();
    expect(noCatchAll("c.d")).toBeUndefined();
  });

  test("a listener without chains matches nothing", () => {
    expect(matcherOf()("a.b")).toBeUndefined();
  });

  test("a name that only looks like a wildcard is an exact name, as in Envoy", () => {
    const m = matcherOf(chain("star", "*"), chain("mid", "a.*.com"), chain("all"));
    expect(m("*")).toBe("star");
    expect(m("a.b.com")).toBe("all");
    expect(m("a.*.com")).toBe("mid");
  });
});

describe("conflicting chains", () => {
  const error = (...chains: Chain[]) => {
    const c = compileChains(chains);
    return c.ok ? undefined : c.error;
  };

  test("a server name in two chains, compared case-insensitively", () => {
    expect(error(chain("a", "x.com"), chain("b", "y.com", "X.COM"))).toBe(
      'server name "x.com" appears in filter chains 0 and 1: multiple filter chains with overlapping matching rules',
    );
    expect(error(chain("a", "*.x.com"), chain("b", "*.X.com"))).toContain('"*.x.com" appears in filter chains 0 and 1');
  });

  test("a name twice in one chain", () => {
    expect(error(chain("a", "x.com", "x.com"))).toContain("twice in filter chain 0");
  });

  test("two catch-all chains", () => {
    expect(error(chain("a"), chain("b", "x.com"), chain("c"))).toBe(
      "filter chains 0 and 2 both have no server_names: multiple filter chains with the same matching rules",
    );
  });

  test("an empty server name", () => {
    expect(error(chain("a", "x.com", ""))).toBe("filter chain 0 has an empty server name");
  });

  test("an exact name and the wildcard of the same suffix do not conflict", () => {
    expect(error(chain("a", "x.com"), chain("b", "*.x.com"))).toBeUndefined();
  });
});

describe("listenerMatcher", () => {
  const listener = (chains: ListenerConfig["chains"]): ListenerConfig => ({ name: "l", address: "127.0.0.1", port: 1, chains });
  const route = { kind: "cluster" as const, cluster: "c" };

  test("compiles once per listener object", () => {
    const l = listener([{ serverNames: ["a.b"], route, statPrefix: "s" }]);
    expect(listenerMatcher(l)).toBe(listenerMatcher(l));
    expect(listenerMatcher(l).match("A.B")).toBe(l.chains[0]);
  });

  test("throws on conflicting chains", () => {
    const l = listener([{ serverNames: [], route, statPrefix: "s" }, { serverNames: [], route, statPrefix: "t" }]);
    expect(() => listenerMatcher(l)).toThrow("listener l: filter chains 0 and 1 both have no server_names");
  });
});
