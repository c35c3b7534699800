import { describe, expect, test } from "bun:test";
import { seededRng } from "../../platform/index.ts";
import { GossipKey } from "../../membership/keyring.ts";
import { createKeygenCommand, keygenCommand } from "./keygen.ts";
import type { Command } from "../command.ts";

async function run(command: Command, argv: string[]) {
  let out = "", err = "";
  const code = await command.run(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

describe("causeway keygen", () => {
  test("prints one line: base64 of 32 bytes that the keyring accepts", async () => {
    const { code, out, err } = await run(keygenCommand, []);
    expect(code).toBe(0);
    expect(err).toBe("");
    expect(out).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);
    const key = out.trimEnd();
    expect(Buffer.from(key, "base64").length).toBe(32);
    expect(Buffer.from(key, "base64").toString("base64")).toBe(key);
    expect(GossipKey.fromBase64(key).size).toBe(32);
  });

  test("differs between runs", async () => {
    const keys = new Set<string>();
    for (let i = 0; i < 20; i++) keys.add((await run(keygenCommand, [])).out);
    expect(keys.size).toBe(20);
  });

  test("draws its bytes from the injected random source", async () => {
    const { out } = await run(createKeygenCommand(() => seededRng(3)), []);
    expect(out).toBe(`${Buffer.from(seededRng(3).bytes(32)).toString("base64")}\n`);
  });

  test("-h and --help print usage", async () => {
    for (const flag of ["-h", "--help", "-help"]) {
      const { code, out, err } = await run(keygenCommand, [flag]);
      expect(code).toBe(0);
      expect(out).toContain("Usage: causeway keygen");
      expect(err).toBe("");
    }
  });

  test("extra arguments and unknown flags are usage errors with nothing on stdout", async () => {
    for (const argv of [["extra"], ["a", "b"], ["-bits=128"], ["--", "x"]]) {
      const { code, out, err } = await run(keygenCommand, argv);
      expect(code).toBe(1);
      expect(out).toBe("");
      expect(err).toContain("Usage: causeway keygen");
    }
    expect((await run(keygenCommand, ["extra"])).err).toContain("takes no arguments");
    expect((await run(keygenCommand, ["-bits=128"])).err).toContain("-bits");
  });

  test("a random source that returns too few bytes is an error, not a short key", async () => {
    const { code, out, err } = await run(createKeygenCommand(() => ({ bytes: () => new Uint8Array(16) })), []);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toContain("want 32");
  });
});
