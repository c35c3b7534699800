import { describe, expect, test } from "bun:test";
import { parseCommandLine, parseFlags, UsageError, type FlagSpec } from "./flags.ts";

const specs: FlagSpec[] = [
  { name: "dev", kind: "bool", usage: "dev mode" },
  { name: "http-port", kind: "int", usage: "port" },
  { name: "node", kind: "string", usage: "name" },
  { name: "config-file", kind: "strings", usage: "file" },
];

describe("parseFlags", () => {
  test("accepts single and double dashes, = and separate values, repeats", () => {
    const p = parseFlags(specs, ["-dev", "--http-port=8600", "-node", "n1", "-config-file", "a.json", "-config-file=b.json", "extra"]);
    expect(p.values.get("dev")).toBe(true);
    expect(p.values.get("http-port")).toBe(8600);
    expect(p.values.get("node")).toBe("n1");
    expect(p.values.get("config-file")).toEqual(["a.json", "b.json"]);
    expect(p.rest).toEqual(["extra"]);
    expect(p.help).toBe(false);
  });

  test("-h and --help ask for help", () => {
    expect(parseFlags(specs, ["-h"]).help).toBe(true);
    expect(parseFlags(specs, ["--help"]).help).toBe(true);
  });

  test("errors name the flag", () => {
    expect(() => parseFlags(specs, ["-nope"])).toThrow(new UsageError("flag provided but not defined: -nope"));
    expect(() => parseFlags(specs, ["-http-port=abc"])).toThrow(/-http-port/);
    expect(() => parseFlags(specs, ["-node"])).toThrow(/flag needs an argument: -node/);
    expect(() => parseFlags(specs, ["-dev=maybe"])).toThrow(/-dev/);
  });
});

describe("parseCommandLine", () => {
  const capture = () => {
    const out: string[] = [], err: string[] = [];
    return { io: { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) }, out, err };
  };

  test("help goes to stdout with exit 0; usage errors to stderr with the help and exit 1", () => {
    const h = capture();
    expect(parseCommandLine(specs, ["-h"], h.io, "HELP")).toBe(0);
    expect(h.out).toEqual(["HELP"]);
    const e = capture();
    expect(parseCommandLine(specs, ["-nope"], e.io, "HELP")).toBe(1);
    expect(e.err).toEqual(["flag provided but not defined: -nope\nHELP"]);
    const a = capture();
    expect(parseCommandLine(specs, ["x"], a.io, "HELP")).toBe(1);
    expect(a.err[0]).toContain("this command takes no arguments (got 1)");
  });

  test("otherwise returns the parsed flags", () => {
    const p = parseCommandLine(specs, ["-dev", "arg"], capture().io, "HELP", 1);
    expect(typeof p).toBe("object");
    expect((p as { rest: readonly string[] }).rest).toEqual(["arg"]);
  });
});
