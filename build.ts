/**
 * Build tasks. Run with Bun:
 *
 *   bun run build.ts gen       generate protobuf-es code into src/gen (also run by `npm ci` through "prepare")
 *   bun run build.ts           build dist/causeway (linux-x64) with `bun build --compile`
 *   bun run build.ts targets   try every cross-compile target offline and report which work
 *   bun run build.ts test      run every suite (Bun, Deno smoke, binary smoke); last line "N passed, N failed"
 */
import { spawnSync, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { failureDetails, formatFailureDetails } from "./test/harness/test_report.ts";

// Not import.meta.dir: that is Bun-only, and Deno type-checks this file too.
const root = dirname(fileURLToPath(import.meta.url));
const bin = (name: string) => join(root, "node_modules", ".bin", name);

/** Envoy API files we generate (their imports come along with --include-imports). */
const ENVOY_PROTOS = [
  "envoy/service/discovery/v3/ads.proto",
  "envoy/service/discovery/v3/discovery.proto",
  "envoy/config/cluster/v3/cluster.proto",
  "envoy/config/listener/v3/listener.proto",
  "envoy/config/endpoint/v3/endpoint.proto",
  "envoy/config/route/v3/route.proto",
  "envoy/config/bootstrap/v3/bootstrap.proto",
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  "envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto",
  "envoy/extensions/filters/network/sni_cluster/v3/sni_cluster.proto",
  "envoy/extensions/filters/network/rbac/v3/rbac.proto",
  "envoy/extensions/filters/http/rbac/v3/rbac.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
  "envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto",
  "envoy/extensions/transport_sockets/tls/v3/tls.proto",
];

function run(cmd: string, args: string[], opts: { cwd?: string } = {}): void {
  const r = spawnSync(cmd, args, { stdio: "inherit", cwd: opts.cwd ?? root });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed with ${r.status ?? r.signal}`);
}

/**
 * Generates src/gen from proto/ and from the Envoy API shipped by @grpc/grpc-js-xds (deps/).
 * Third-party protos are copied to a temporary workspace and never committed. Their validate.proto
 * lacks StringRules.ignore_empty (field 26), which Envoy's protos use, so the copy is patched.
 */
export function generate(): void {
  const deps = join(root, "node_modules", "@grpc", "grpc-js-xds", "deps");
  const work = mkdtempSync(join(tmpdir(), "causeway-gen-"));
  try {
    for (const [from, to] of [["envoy-api", "envoy"], ["xds", "xds"], ["googleapis", "googleapis"], ["protoc-gen-validate", "validate"]]) {
      cpSync(join(deps, from!), join(work, to!), { recursive: true });
    }
    cpSync(join(root, "proto"), join(work, "own"), { recursive: true });
    const validate = join(work, "validate", "validate", "validate.proto");
    const original = readFileSync(validate, "utf8");
    const patched = original.replace(/(message StringRules \{[\s\S]*?optional bool strict\s*=\s*25[^;]*;)/, "$1\n  optional bool ignore_empty = 26;");
    if (patched === original) throw new Error("gen: could not patch validate.proto (StringRules.strict not found)");
    writeFileSync(validate, patched);
    writeFileSync(join(work, "buf.yaml"), [
      "version: v2",
      "modules:",
      ...["envoy", "xds", "googleapis", "validate", "own"].map((m) => `  - path: ${m}`),
      "",
    ].join("\n"));
    const out = join(root, "src", "gen");
    rmSync(out, { recursive: true, force: true });
    const template = JSON.stringify({
      version: "v2",
      plugins: [{ local: bin("protoc-gen-es"), out, opt: ["target=ts", "import_extension=ts"], strategy: "all", include_imports: true }],
    });
    const paths = [...ENVOY_PROTOS.map((p) => join("envoy", p)), "own/causeway"];
    run(bin("buf"), ["generate", "--template", template, ...paths.flatMap((p) => ["--path", p])], { cwd: work });
    console.error(`gen: wrote ${out}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The git revision of the checkout, or "" outside a git checkout. */
function gitRevision(): string {
  const r = spawnSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: root, encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : "";
}

/** Compiles src/main/cli.ts into one self-contained executable for `target` (a `bun build --target`). */
export function buildBinary(target: string, outfile: string): void {
  if (!existsSync(join(root, "src", "gen"))) generate();
  run(bin("bun"), [
    "build", "--compile", "--minify-syntax", `--target=${target}`,
    `--define`, `CAUSEWAY_REVISION=${JSON.stringify(gitRevision())}`,
    join(root, "src", "main", "cli.ts"), "--outfile", resolve(root, outfile),
  ]);
}

/** Every target `bun build --compile` knows; which of them work offline depends on the machine (README). */
const TARGETS = ["bun-linux-x64", "bun-linux-x64-baseline", "bun-linux-arm64", "bun-linux-x64-musl", "bun-linux-arm64-musl", "bun-darwin-x64", "bun-darwin-arm64", "bun-windows-x64"];

function buildAllTargets(): void {
  const results: string[] = [];
  for (const t of TARGETS) {
    const out = `dist/causeway-${t.replace(/^bun-/, "")}${t.includes("windows") ? ".exe" : ""}`;
    try {
      buildBinary(t, out);
      results.push(`ok      ${t} -> ${out}`);
    } catch (err) {
      results.push(`failed  ${t}: ${(err as Error).message}`);
    }
  }
  console.log(results.join("\n"));
}

interface SuiteResult { name: string; passed: number; failed: number; exitCode: number }

/** Runs a command with output streamed through, returning its combined output and exit code. */
function runCapture(cmd: string, args: string[], env: Record<string, string> = {}): Promise<{ output: string; code: number }> {
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => { output += d; process.stdout.write(d); });
    child.stderr.on("data", (d) => { output += d; process.stderr.write(d); });
    child.on("close", (code, signal) => done({ output, code: code ?? (signal ? 128 : 1) }));
  });
}

function count(output: string, re: RegExp): number {
  const m = [...output.matchAll(re)].pop();
  return m ? Number(m[1]) : 0;
}

/**
 * Runs every suite: the Bun suite (unit, architecture, simulation, e2e including the compiled binary),
 * the web UI's browser suite again against the compiled binary and on Deno, then the Deno smoke suite. Prints "N passed, N failed" summing both as the last line and returns the
 * exit code (non-zero if any suite failed or could not report).
 */
async function runAllSuites(): Promise<number> {
  if (!existsSync(join(root, "src", "gen"))) generate();
  const results: SuiteResult[] = [];
  const bunRun = await runCapture(bin("bun"), ["test", "--path-ignore-patterns=test/runtime/deno/**", "--path-ignore-patterns=test/bench/**", "--timeout=60000"]);
  results.push({ name: "bun", passed: count(bunRun.output, /^\s*(\d+) pass$/gm), failed: count(bunRun.output, /^\s*(\d+) fail$/gm), exitCode: bunRun.code });
  // The web UI's browser suite once more against the compiled binary and against Deno from source:
  // the same pages, assets and live streams must work in all three (test/harness/ui_agent.ts).
  const failedOutputs = [bunRun.output];
  for (const runtime of ["binary", "deno"]) {
    const uiRun = await runCapture(bin("bun"), ["test", "--timeout=120000", "test/ui/"], { CAUSEWAY_UI_RUNTIME: runtime });
    results.push({ name: `ui-${runtime}`, passed: count(uiRun.output, /^\s*(\d+) pass$/gm), failed: count(uiRun.output, /^\s*(\d+) fail$/gm), exitCode: uiRun.code });
    failedOutputs.push(uiRun.output);
  }
  const denoRun = await runCapture(bin("deno"), ["test", "-A", "test/runtime/deno/"], { NO_COLOR: "1" });
  const denoSummary = /(?:ok|FAILED) \| (\d+) passed[^|]*\| (\d+) failed/.exec(denoRun.output);
  results.push({ name: "deno", passed: Number(denoSummary?.[1] ?? 0), failed: Number(denoSummary?.[2] ?? 0), exitCode: denoRun.code });
  // The end of a CI log is often all anyone sees: repeat what each failed Bun test printed there.
  const details = formatFailureDetails(failedOutputs.flatMap((o) => failureDetails(o, 100)));
  if (details) console.log(details);
  let passed = 0, failed = 0, bad = false;
  for (const r of results) {
    console.log(`suite ${r.name}: ${r.passed} passed, ${r.failed} failed (exit ${r.exitCode})`);
    passed += r.passed;
    failed += r.failed;
    // A suite that exits non-zero without reporting a failure (crash, load error) still fails the run.
    if (r.exitCode !== 0 && r.failed === 0) { failed += 1; bad = true; console.log(`suite ${r.name}: exited ${r.exitCode} without a failure count; counted as 1 failure`); }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed > 0 || bad ? 1 : 0;
}

async function main(): Promise<void> {
  const task = process.argv[2] ?? "binary";
  switch (task) {
    case "gen":
      generate();
      return;
    case "binary":
      buildBinary("bun-linux-x64", "dist/causeway");
      return;
    case "targets":
      buildAllTargets();
      return;
    case "test":
      process.exit(await runAllSuites());
    default:
      console.error(`build.ts: unknown task "${task}" (expected gen, binary, targets or test)`);
      process.exit(2);
  }
}

if (import.meta.main) await main();
