/**
 * Transcript tests of compileDiscoveryChain, ported in spirit from Consul 1.8's
 * agent/consul/discoverychain/compile_test.go. Each testdata/*.json file is an array of cases:
 *
 *   { "name", "consul"?: the compile_test.go case it follows, "request"?: CompileRequest fields
 *     overriding the defaults below, "entries": raw config entries (decoded with decodeConfigEntry and,
 *     unless "invalidEntries" is true, validated like Consul's sanity check), then the outcome:
 *     "expect": the whole compiled chain, or "error" + "errorType" }
 *
 * `REWRITE=1 npx bun test src/connect/discovery_chain` rewrites the outcomes; review the diff.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodeConfigEntry, validateConfigEntry } from "../config_entries/index.ts";
import { compileDiscoveryChain, type CompileRequest } from "./index.ts";

interface Case {
  name: string;
  consul?: string;
  request?: Partial<Omit<CompileRequest, "entries">>;
  invalidEntries?: boolean;
  entries: unknown[];
  expect?: unknown;
  error?: string;
  errorType?: string;
}

const dir = join(import.meta.dir, "testdata");
const rewrite = process.env.REWRITE === "1";

function run(c: Case): Pick<Case, "expect" | "error" | "errorType"> {
  const entries = c.entries.map((raw) => {
    const e = decodeConfigEntry(raw);
    if (!c.invalidEntries) validateConfigEntry(e);
    return e;
  });
  try {
    const chain = compileDiscoveryChain({
      serviceName: "main",
      evaluateInNamespace: "default",
      evaluateInDatacenter: "dc1",
      evaluateInTrustDomain: "trustdomain.consul",
      useInDatacenter: "dc1",
      ...c.request,
      entries,
    });
    return { expect: JSON.parse(JSON.stringify(chain)) };
  } catch (err) {
    return { error: (err as Error).message, errorType: (err as Error).name };
  }
}

const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
let total = 0;
for (const file of files) {
  const path = join(dir, file);
  const cases = JSON.parse(readFileSync(path, "utf8")) as Case[];
  total += cases.length;
  const outcomes = cases.map(run);
  describe(file, () => {
    for (const [i, c] of cases.entries()) {
      test(c.name, () => {
        const got = outcomes[i]!;
        if (rewrite) return;
        expect(got).toEqual({ expect: c.expect, error: c.error, errorType: c.errorType } as never);
      });
    }
  });
  if (rewrite) {
    const next = cases.map((c, i) => {
      const { expect: _e, error: _r, errorType: _t, ...input } = c;
      return { ...input, ...outcomes[i] };
    });
    writeFileSync(path, `${JSON.stringify(next, null, 2)}\n`);
  }
}

test("the transcripts hold at least 40 compile cases", () => {
  expect(total).toBeGreaterThanOrEqual(40);
});

test("output is deterministic: compiling twice gives the same bytes", () => {
  const entries = [
    { Kind: "proxy-defaults", Name: "global", Config: { protocol: "http" } },
    { Kind: "service-splitter", Name: "main", Splits: [{ Weight: 50, Service: "b" }, { Weight: 50, Service: "a" }] },
  ].map(decodeConfigEntry);
  const req = { serviceName: "main", evaluateInDatacenter: "dc1", evaluateInTrustDomain: "td.consul", useInDatacenter: "dc1", entries };
  expect(JSON.stringify(compileDiscoveryChain(req))).toBe(JSON.stringify(compileDiscoveryChain({ ...req, entries: [...entries].reverse() })));
});

test("required request fields", () => {
  expect(() => compileDiscoveryChain({ serviceName: "", evaluateInDatacenter: "dc1", evaluateInTrustDomain: "t", useInDatacenter: "dc1", entries: [] })).toThrow(
    "serviceName is required",
  );
  expect(() => compileDiscoveryChain({ serviceName: "web", evaluateInDatacenter: "dc1", evaluateInTrustDomain: "", useInDatacenter: "dc1", entries: [] })).toThrow(
    "evaluateInTrustDomain is required",
  );
});
