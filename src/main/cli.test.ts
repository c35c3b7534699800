import { describe, expect, test } from "bun:test";
import { COMMANDS, runCli } from "./cli.ts";

/** Runs the CLI in process, collecting what it prints. */
async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await runCli(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

describe("causeway CLI", () => {
  test("lists every command in its usage", async () => {
    const r = await run(["--help"]);
    expect(r.code).toBe(0);
    for (const c of COMMANDS) expect(r.out).toContain(`    ${c.name}`);
  });

  test("every command answers -h and --help with its usage and exit 0, without contacting anything", async () => {
    for (const c of COMMANDS) {
      for (const flag of ["-h", "--help"]) {
        const r = await run([c.name, flag]);
        if (r.code !== 0 || !/Usage: causeway/.test(r.out + r.err)) {
          throw new Error(`causeway ${c.name} ${flag}: exit ${r.code}\n${r.out}${r.err}`);
        }
      }
    }
  });

  test("an unknown command is an error naming it", async () => {
    const r = await run(["nope"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('unknown command "nope"');
  });
});
