import { expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseTranscript, renderTranscript } from "./datadriven.ts";
import { InteractionEnv } from "./interaction.ts";

const dir = join(import.meta.dir, "testdata");
const rewrite = process.env.REWRITE === "1";

for (const file of readdirSync(dir).filter((f) => f.endsWith(".txt")).sort()) {
  test(`transcript ${file}`, () => {
    const path = join(dir, file);
    const chunks = parseTranscript(readFileSync(path, "utf8"));
    const env = new InteractionEnv();
    const outputs = new Map<number, string>();
    const failures: string[] = [];
    for (const c of chunks) {
      if (c.kind !== "case") continue;
      const tc = c.testCase!;
      const actual = env.handle(tc);
      outputs.set(tc.line, actual);
      if (!rewrite && actual !== tc.expected) {
        failures.push(`${file}:${tc.line}: ${tc.input}\n--- expected\n${tc.expected}\n--- actual\n${actual}`);
        break; // later blocks depend on this one
      }
    }
    if (rewrite) writeFileSync(path, renderTranscript(chunks, outputs));
    else expect(failures.join("\n\n")).toBe("");
  });
}
