import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand as run } from "../../../test/harness/cli_agent.ts";
import { validateCommand as validate } from "./validate.ts";

const work = mkdtempSync(join(tmpdir(), "causeway-validate-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Writes `doc` as JSON (or text as given) at `name` under the work dir; returns its path. */
function file(name: string, doc: unknown): string {
  const path = join(work, name);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, typeof doc === "string" ? doc : JSON.stringify(doc));
  return path;
}

let badFiles = 0;

describe("causeway validate", () => {
  test("a complete configuration over files and a directory is valid; -quiet says nothing", async () => {
    const base = file("ok/base.json", { datacenter: "east", data_dir: "/var/lib/causeway", server: true, bootstrap_expect: 3 });
    file("ok.d/10-ports.json", { ports: { dns: -1 } });
    file("ok.d/20-ui.json", { ui_config: { enabled: true } });
    mkdirSync(join(work, "ok.d", "old.json"), { recursive: true }); // a directory named like a file: skipped
    expect(await run(validate, [base, join(work, "ok.d")])).toEqual({ code: 0, out: "Configuration is valid!\n", err: "" });
    expect(await run(validate, ["-quiet", base])).toEqual({ code: 0, out: "", err: "" });
  });

  test.each([
    ["an unknown key", { data_dir: "/d", datacenter: "dc1", colour: "red" }, "invalid config key colour"],
    ["a key named like a JS built-in", { data_dir: "/d", constructor: 1 }, "invalid config key constructor"],
    ["a value of the wrong type", { data_dir: "/d", server: "yes" }, "server"],
    ["no data_dir (checked on the whole configuration)", { datacenter: "dc1" }, "data_dir cannot be empty"],
    ["a combination that cannot work", { data_dir: "/d", bootstrap_expect: 3 }, "bootstrap_expect requires server mode"],
    ["a bad log level", { data_dir: "/d", log_level: "loud" }, 'log_level "loud" is not one of'],
    ["broken JSON", "{ not json", "invalid JSON"],
  ])("%s fails with the reason and exit 1", async (_what: string, doc: unknown, reason: string) => {
    const path = file(`bad-${++badFiles}.json`, doc);
    const { code, out, err } = await run(validate, [path]);
    expect({ code, out }).toEqual({ code: 1, out: "" });
    expect(err).toStartWith("Config validation failed: ");
    expect(err).toContain(reason);
  });

  test("HCL is refused by name, in a directory or as a file, instead of being skipped", async () => {
    file("mixed.d/a.json", { data_dir: "/d" });
    const hcl = file("mixed.d/b.hcl", 'server = true\n');
    for (const target of [join(work, "mixed.d"), hcl]) {
      const { code, err } = await run(validate, [target]);
      expect(code).toBe(1);
      expect(err).toBe(`Config validation failed: ${hcl}: HCL config files are not supported; write the configuration as JSON (same keys)\n`);
    }
    expect((await run(validate, ["-config-format", "hcl", hcl])).err).toBe("-config-format hcl is not supported: Causeway reads JSON config files only\n");
  });

  test("no path, a missing path, a bad format", async () => {
    expect(await run(validate, [])).toEqual({ code: 1, out: "", err: "Must specify at least one config file or directory\n" });
    const missing = await run(validate, [join(work, "nope.json")]);
    expect([missing.code, missing.err]).toEqual([1, expect.stringContaining(`Config validation failed: cannot read config file ${join(work, "nope.json")}`)]);
    expect((await run(validate, ["-config-format", "yaml", "x"])).err).toBe("-config-format must be either 'hcl' or 'json'\n");
  });
});
