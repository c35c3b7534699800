/**
 * Enforces DESIGN.md sections 1 and 2 on the real tree, and proves with fixtures that each rule
 * would catch a violation.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { checkArchitecture, findCycles, importSpecifiers } from "./architecture/check.ts";

const root = join(import.meta.dir, "..");

function sourceTree(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(entry.name)) files.set(relative(root, path).split("\\").join("/"), readFileSync(path, "utf8"));
    }
  };
  walk(join(root, "src"));
  return files;
}

describe("architecture of src/", () => {
  test("has no upward or sideways imports, deep imports, cycles or runtime globals outside their places", () => {
    const violations = checkArchitecture(sourceTree());
    expect(violations.map((v) => `${v.file}: ${v.rule}: ${v.detail}`)).toEqual([]);
  });
});

describe("the checker catches", () => {
  const fixture = (files: Record<string, string>) => checkArchitecture(new Map(Object.entries(files)));

  test("an import that points up a layer", () => {
    const v = fixture({ "src/raft/core.ts": `import { startAgent } from "../main/index.ts";\n`, "src/main/index.ts": "" });
    expect(v.map((x) => x.rule)).toEqual(["upward-import"]);
    expect(v[0]!.detail).toContain("src/raft (layer 7) imports src/main/index.ts");
  });

  test("a type-only upward import, too", () => {
    const v = fixture({ "src/platform/x.ts": `import type {\n  HttpApiDeps,\n} from "../http/index.ts";\n` });
    expect(v.map((x) => x.rule)).toEqual(["upward-import"]);
  });

  test("a sideways import between layers of the same rank", () => {
    expect(fixture({ "src/raft/a.ts": `export * from "../state/index.ts";` }).map((x) => x.rule)).toEqual(["sideways-import"]);
  });

  test("an import of the server layer from anywhere but src/main, even from a layer above it", () => {
    const v = fixture({
      "src/http/a.ts": `import { startServer } from "../server/index.ts";`,
      "src/rpc/b.ts": `import type { RunningServer } from "../server/index.ts";`,
      "src/main/ok.ts": `import { startServer } from "../server/index.ts";`,
    });
    expect(v.map((x) => `${x.file} ${x.rule}`)).toEqual(["src/http/a.ts restricted-import", "src/rpc/b.ts upward-import"]);
    expect(v[0]!.detail).toBe("src/http imports src/server/index.ts; only src/main may import src/server");
  });

  test("an import by the server layer of a layer it may not build on (the agent, proxycfg, xds)", () => {
    const v = fixture({
      "src/server/a.ts": `import { createLocalAgent } from "../agent/index.ts";\nimport { x } from "../proxycfg/index.ts";`,
      "src/server/ok.ts": `import { createStateStore } from "../state/index.ts";\nimport { route } from "../rpc/index.ts";\nimport type { PoolMember } from "../membership/index.ts";`,
    });
    expect(v.map((x) => `${x.file} ${x.rule}`)).toEqual(["src/server/a.ts restricted-import", "src/server/a.ts restricted-import"]);
    expect(v[0]!.detail).toContain("src/server imports src/agent/index.ts; src/server may import only");
  });

  test("a deep import past another folder's index.ts", () => {
    expect(fixture({ "src/consensus/a.ts": `import { RawNode } from "../raft/rawnode.ts";` }).map((x) => x.rule)).toEqual(["deep-import"]);
  });

  test("an import cycle inside a folder", () => {
    const v = fixture({ "src/raft/a.ts": `import "./b.ts";`, "src/raft/b.ts": `import { a } from "./a.ts";` });
    expect(v.map((x) => x.rule)).toEqual(["cycle"]);
    expect(v[0]!.detail).toBe("import cycle: src/raft/a.ts -> src/raft/b.ts -> src/raft/a.ts");
  });

  test("type-only imports do not form a cycle, value imports do", () => {
    const typeCycle = fixture({ "src/raft/a.ts": `import type { B } from "./b.ts";`, "src/raft/b.ts": `import { a } from "./a.ts";` });
    expect(typeCycle).toEqual([]);
  });

  test("a port method named like a global is not the global", () => {
    expect(fixture({ "src/raft/t.ts": `clock.setInterval(100, f); this.clock.setTimeout(1, g); obj.process.x;` })).toEqual([]);
  });

  test("runtime globals outside src/platform and src/main, but not in comments or strings", () => {
    const v = fixture({
      "src/raft/t.ts": `// Date.now() is fine in a comment\nconst s = "setTimeout(";\nconst t = Date.now();\n`,
      "src/platform/ok.ts": `setTimeout(() => {}, 1);`,
      "src/main/ok.ts": `process.exit(0);`,
    });
    expect(v.map((x) => `${x.file} ${x.detail}`)).toEqual(["src/raft/t.ts uses Date.now at line 3; inject Clock/Rng from src/platform instead"]);
  });

  test("allowed edges pass: down a layer through index.ts, generated code deeply", () => {
    expect(
      fixture({
        "src/consensus/a.ts": `import { RawNode } from "../raft/index.ts";\nimport type { Rng } from "../platform/index.ts";`,
        "src/xds/b.ts": `import { ClusterSchema } from "../gen/envoy/config/cluster/v3/cluster_pb.ts";`,
        "src/raft/a.test.ts": `import { x } from "../main/index.ts"; Date.now();`,
      }),
    ).toEqual([]);
  });
});

describe("import parsing", () => {
  test("finds static, re-export, side-effect and dynamic imports, skipping comments", () => {
    const src = `import a from "./a.ts";\nimport { b,\n c } from "./b.ts";\nexport * from "./c.ts";\nimport "./d.ts";\nconst e = await import("./e.ts");\n// import z from "./z.ts";\n`;
    expect(importSpecifiers(src)).toEqual(["./a.ts", "./b.ts", "./c.ts", "./d.ts", "./e.ts"]);
  });

  test("findCycles reports each strongly connected component once", () => {
    const g = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["d"]], ["e", ["a"]]]);
    expect(findCycles(g)).toEqual([["a", "b", "c"], ["d"]]);
  });
});
