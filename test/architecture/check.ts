/**
 * The architecture rules of DESIGN.md section 1 and 2 as a pure function over source files, so the
 * test can run it both on the real tree and on small fixtures that prove each rule bites.
 */

/**
 * Layer rank of each top-level folder under src/ (DESIGN.md section 1, top to bottom): imports may only
 * point to a strictly higher rank.
 */
export const LAYER_RANK: Readonly<Record<string, number>> = {
  main: 0,
  ui: 1, http: 1, dns: 1, gateway: 1,
  server: 2, xds: 2,
  proxycfg: 3,
  agent: 4,
  federation: 5, acl: 5, connect: 5, rpc: 5,
  membership: 6, consensus: 6,
  state: 7, raft: 7,
  model: 8,
  telemetry: 9, platform: 9, lib: 9, gen: 9,
};

/** Sideways edges between folders of the same rank that the design allows. */
export const ALLOWED_SIDEWAYS: ReadonlySet<string> = new Set(["platform->lib"]);

/**
 * Folders that only the listed folders may import, whatever the ranks say: a server is a role that
 * only the composition root assembles (interface layers read it through interfaces they declare).
 */
export const ONLY_IMPORTED_BY: Readonly<Record<string, ReadonlySet<string>>> = {
  server: new Set(["main"]),
};

/**
 * Folders that may import only the listed folders (a narrower rule than the ranks). The server builds
 * on consensus, state and RPC, never on the agent's or the proxies' layers; the gateway data plane is
 * a program of its own inside the binary.
 */
export const MAY_IMPORT_ONLY: Readonly<Record<string, ReadonlySet<string>>> = {
  server: new Set(["federation", "acl", "connect", "rpc", "membership", "consensus", "state", "raft", "model", "telemetry", "platform", "lib", "gen"]),
  gateway: new Set(["telemetry", "platform", "lib", "gen"]),
};

/** Folders whose files may use runtime globals. */
export const GLOBALS_ALLOWED_IN: ReadonlySet<string> = new Set(["platform", "main", "gen"]);

/** Folders that others may import deeply (generated code has no index.ts). */
const DEEP_IMPORT_OK: ReadonlySet<string> = new Set(["gen"]);

/** `(?<![.\w$])` keeps `clock.setInterval(...)` (a port method) from matching the global. */
const FORBIDDEN_GLOBALS: readonly [RegExp, string][] = [
  [/(?<![.\w$])Bun\s*\./, "Bun"],
  [/(?<![.\w$])Deno\s*\./, "Deno"],
  [/(?<![.\w$])process\s*\./, "process"],
  [/(?<![.\w$])setTimeout\s*\(/, "setTimeout"],
  [/(?<![.\w$])setInterval\s*\(/, "setInterval"],
  [/(?<![.\w$])setImmediate\s*\(/, "setImmediate"],
  [/(?<![.\w$])Date\s*\.\s*now\s*\(/, "Date.now"],
  [/(?<![.\w$])new\s+Date\s*\(\s*\)/, "new Date()"],
  [/(?<![.\w$])Math\s*\.\s*random\s*\(/, "Math.random"],
  [/(?<![.\w$])crypto\s*\.\s*getRandomValues\s*\(/, "crypto.getRandomValues"],
  [/(?<![.\w$])performance\s*\.\s*now\s*\(/, "performance.now"],
];

export interface Violation {
  readonly file: string;
  readonly rule: "upward-import" | "sideways-import" | "restricted-import" | "deep-import" | "unknown-layer" | "cycle" | "runtime-global";
  readonly detail: string;
}

/** Removes comments and the contents of string and template literals, keeping line structure. */
export function stripCommentsAndStrings(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|`(?:\\[\s\S]|[^`\\])*`|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"/g, (m) =>
    m.startsWith("/") ? m.replace(/[^\n]/g, " ") : m[0] + m.slice(1, -1).replace(/[^\n]/g, " ") + m[0],
  );
}

/** Removes comments only (string contents stay, so import specifiers survive). */
export function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|`(?:\\[\s\S]|[^`\\])*`|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"/g, (m) =>
    m.startsWith("/") ? m.replace(/[^\n]/g, " ") : m,
  );
}

/** Module specifiers a file imports or re-exports, static or dynamic, type-only included. Comments are ignored. */
export function importSpecifiers(source: string): string[] {
  return imports(source).map((i) => i.spec);
}

/**
 * Imports with whether they are type-only (`import type ...` / `export type ... from`), which the
 * compiler erases: they count for layering but cannot form a runtime cycle.
 */
export function imports(source: string): { spec: string; typeOnly: boolean }[] {
  const src = stripComments(source);
  const out: { spec: string; typeOnly: boolean }[] = [];
  const re = /(?:^|[;\n}])\s*(?:import|export)\s+(type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;
  for (const m of src.matchAll(re)) out.push({ spec: (m[2] ?? m[3])!, typeOnly: m[1] !== undefined });
  return out;
}

/** Resolves a relative specifier against the importing file ("src/a/b.ts" + "../c/d.ts" -> "src/c/d.ts"). */
export function resolveRelative(from: string, spec: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const seg of spec.split("/")) {
    if (seg === "." || seg === "") continue;
    if (seg === "..") parts.pop();
    else parts.push(seg);
  }
  return parts.join("/");
}

function folderOf(path: string): string | undefined {
  const m = /^src\/([^/]+)\//.exec(path);
  return m?.[1];
}

/**
 * Checks non-test files under src/ (paths relative to the project root, e.g. "src/raft/log.ts").
 * Returns every violation found, sorted for stable output.
 */
export function checkArchitecture(files: ReadonlyMap<string, string>): Violation[] {
  const violations: Violation[] = [];
  const graph = new Map<string, string[]>();
  for (const [file, source] of files) {
    if (!file.startsWith("src/") || file.endsWith(".test.ts")) continue;
    const from = folderOf(file);
    if (from === undefined) continue;
    if (LAYER_RANK[from] === undefined) violations.push({ file, rule: "unknown-layer", detail: `src/${from} is not a layer in DESIGN.md` });
    const edges: string[] = [];
    for (const { spec, typeOnly } of imports(source)) {
      if (!spec.startsWith(".")) continue;
      const target = resolveRelative(file, spec);
      if (!typeOnly) edges.push(target);
      const to = folderOf(target);
      if (to === undefined || to === from || from === "gen") continue;
      const rf = LAYER_RANK[from], rt = LAYER_RANK[to];
      if (rf === undefined || rt === undefined) {
        if (rt === undefined) violations.push({ file, rule: "unknown-layer", detail: `imports ${target} from unknown layer src/${to}` });
        continue;
      }
      if (rt < rf) violations.push({ file, rule: "upward-import", detail: `src/${from} (layer ${rf}) imports ${target} (src/${to}, layer ${rt})` });
      else if (rt === rf && !ALLOWED_SIDEWAYS.has(`${from}->${to}`)) violations.push({ file, rule: "sideways-import", detail: `src/${from} imports ${target}; src/${to} is on the same layer` });
      else if (ONLY_IMPORTED_BY[to] && !ONLY_IMPORTED_BY[to].has(from)) violations.push({ file, rule: "restricted-import", detail: `src/${from} imports ${target}; only ${[...ONLY_IMPORTED_BY[to]].map((f) => `src/${f}`).join(", ")} may import src/${to}` });
      else if (MAY_IMPORT_ONLY[from] && !MAY_IMPORT_ONLY[from].has(to)) violations.push({ file, rule: "restricted-import", detail: `src/${from} imports ${target}; src/${from} may import only ${[...MAY_IMPORT_ONLY[from]].map((f) => `src/${f}`).join(", ")}` });
      if (!DEEP_IMPORT_OK.has(to) && target !== `src/${to}/index.ts`) violations.push({ file, rule: "deep-import", detail: `imports ${target}; import src/${to}/index.ts instead` });
    }
    graph.set(file, edges);
    if (!GLOBALS_ALLOWED_IN.has(from)) {
      const code = stripCommentsAndStrings(source);
      for (const [re, name] of FORBIDDEN_GLOBALS) {
        const m = re.exec(code);
        if (m) {
          const line = code.slice(0, m.index).split("\n").length;
          violations.push({ file, rule: "runtime-global", detail: `uses ${name} at line ${line}; inject Clock/Rng from src/platform instead` });
        }
      }
    }
  }
  for (const cycle of findCycles(graph)) violations.push({ file: cycle[0]!, rule: "cycle", detail: `import cycle: ${[...cycle, cycle[0]].join(" -> ")}` });
  return violations.sort((a, b) => a.file.localeCompare(b.file) || a.detail.localeCompare(b.detail));
}

/** Strongly connected components with more than one file (or a self-import), via Tarjan's algorithm. */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>(), low = new Map<string, number>(), onStack = new Set<string>();
  const stack: string[] = [], cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do { w = stack.pop()!; onStack.delete(w); scc.push(w); } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles;
}
