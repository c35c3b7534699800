import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { consulSnapshot } from "../../../../test/harness/cli_snapshot_fixture.ts";
import { writeSnapshotArchive } from "../../../state/index.ts";
import { createSnapshotCommand } from "../snapshot.ts";
import { readSnapshotMeta } from "./format.ts";

const state = new TextEncoder().encode("state bytes ".repeat(100));
const META = { Version: 1, ID: "2-5-1477944140022", Index: 5, Term: 2, Size: state.length };
const CONSUL_SNAP = writeSnapshotArchive(state, { index: 5, term: 2, nowMs: 1477944140022 });
const INSPECTED = ["ID           2-5-1477944140022", `Size         ${state.length}`, "Index        5", "Term         2", "Version      1", "", ""].join("\n");

let agent: RecordingAgent;
let snapshot: ReturnType<typeof createSnapshotCommand>;
const dir = mkdtempSync(join(tmpdir(), "cw-snap-"));
beforeAll(async () => {
  agent = await startRecordingAgent();
  snapshot = createSnapshotCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url }), readStdin: async () => new Uint8Array() });
});
afterAll(() => agent.close());

describe("snapshot file format", () => {
  test("the server's archive: meta.json, SHA256SUMS verified; damage and other files refused", () => {
    expect(readSnapshotMeta(CONSUL_SNAP)).toEqual({ ID: META.ID, Size: state.length, Index: 5, Term: 2, Version: 1 });
    expect(readSnapshotMeta(consulSnapshot({ meta: META, state }))).toEqual(META);
    expect(() => readSnapshotMeta(consulSnapshot({ meta: META, state, withoutSums: true }))).toThrow("SHA256SUMS is missing");
    expect(() => readSnapshotMeta(consulSnapshot({ meta: META, state, tamperedState: new Uint8Array([1]) }))).toThrow("the SHA-256 of state.bin does not match");
    expect(() => readSnapshotMeta(CONSUL_SNAP.subarray(0, 40))).toThrow("not gzip data");
    expect(() => readSnapshotMeta(new TextEncoder().encode("raw"))).toThrow("not a snapshot");
  });
});

describe("causeway snapshot save", () => {
  test("GET /v1/snapshot, verified, written atomically, index from X-Consul-Index", async () => {
    agent.reset({ "GET /v1/snapshot": { body: CONSUL_SNAP, headers: { "X-Consul-Index": "5" } } });
    const file = join(dir, "backup.snap");
    expect(await run(snapshot, ["save", "-stale", "-datacenter=dc2", file])).toEqual({ code: 0, out: "Saved and verified snapshot to index 5\n", err: "" });
    expect(agent.lines()).toEqual(["GET /v1/snapshot?dc=dc2&stale="]);
    expect(new Uint8Array(readFileSync(file))).toEqual(CONSUL_SNAP);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(existsSync(`${file}.unverified`)).toBe(false);
  });

  test("a download that is not a snapshot is refused and leaves no file", async () => {
    agent.reset({ "GET /v1/snapshot": { body: new TextEncoder().encode("opaque"), headers: { "X-Consul-Index": "9" } } });
    const file = join(dir, "other.snap");
    const r = await run(snapshot, ["save", file]);
    expect(r.code).toBe(1);
    expect(r.err).toStartWith("Error verifying snapshot file: not a snapshot: the file is not gzip data");
    expect(existsSync(file) || existsSync(`${file}.unverified`)).toBe(false);
  });

  test("a corrupt or empty download leaves no file and exits 1", async () => {
    const file = join(dir, "bad.snap");
    agent.reset({ "GET /v1/snapshot": { body: consulSnapshot({ meta: META, state, tamperedState: new Uint8Array([0]) }) } });
    expect(await run(snapshot, ["save", file])).toEqual({ code: 1, out: "", err: "Error verifying snapshot file: snapshot is damaged: the SHA-256 of state.bin does not match SHA256SUMS\n" });
    agent.reset({ "GET /v1/snapshot": { body: "" } });
    expect(await run(snapshot, ["save", file])).toEqual({ code: 1, out: "", err: "Error saving snapshot: the agent returned an empty snapshot\n" });
    expect(existsSync(file) || existsSync(`${file}.unverified`)).toBe(false);
  });

  test("an agent error and argument errors", async () => {
    agent.reset({ "GET /v1/snapshot": { status: 500, body: "No cluster leader" } });
    expect(await run(snapshot, ["save", join(dir, "x.snap")])).toEqual({ code: 1, out: "", err: "Error saving snapshot: Unexpected response code: 500 (No cluster leader)\n" });
    expect(await run(snapshot, ["save"])).toEqual({ code: 1, out: "", err: "Missing FILE argument\n" });
    expect(await run(snapshot, ["save", "a", "b"])).toEqual({ code: 1, out: "", err: "Too many arguments (expected 1, got 2)\n" });
  });
});

describe("causeway snapshot restore", () => {
  test("PUT /v1/snapshot with the file's bytes", async () => {
    const file = join(dir, "restore.snap");
    writeFileSync(file, CONSUL_SNAP);
    agent.reset({ "PUT /v1/snapshot": { body: "" } });
    expect(await run(snapshot, ["restore", "-token=t", file])).toEqual({ code: 0, out: "Restored snapshot\n", err: "" });
    expect(agent.lines()).toEqual(["PUT /v1/snapshot"]);
    expect(agent.requests[0]!.body).toEqual(CONSUL_SNAP);
    expect(agent.requests[0]!.headers.get("x-consul-token")).toBe("t");
  });

  test("errors: missing file, server refusal", async () => {
    agent.reset({ "PUT /v1/snapshot": { status: 500, body: "failed to restore snapshot: bad archive" } });
    expect((await run(snapshot, ["restore", join(dir, "missing")])).err).toStartWith("Error opening snapshot file: ");
    const file = join(dir, "r2.snap");
    writeFileSync(file, "junk");
    expect(await run(snapshot, ["restore", file])).toEqual({ code: 1, out: "", err: "Error restoring snapshot: Unexpected response code: 500 (failed to restore snapshot: bad archive)\n" });
  });
});

describe("causeway snapshot inspect", () => {
  test("prints Consul's block", async () => {
    const a = join(dir, "a.snap");
    writeFileSync(a, CONSUL_SNAP);
    expect(await run(snapshot, ["inspect", a])).toEqual({ code: 0, out: INSPECTED, err: "" });
  });

  test("errors: unverifiable file, missing file, no HTTP flags", async () => {
    const bad = join(dir, "bad2.snap");
    writeFileSync(bad, "raw");
    expect((await run(snapshot, ["inspect", bad])).err).toStartWith("Error verifying snapshot: not a snapshot");
    expect((await run(snapshot, ["inspect", join(dir, "none")])).err).toStartWith("Error opening snapshot file: ");
    expect((await run(snapshot, ["inspect", "-http-addr=x", bad])).err).toStartWith("flag provided but not defined: -http-addr\n");
    const help = await run(snapshot, ["inspect", "-h"]);
    expect(help.out).toContain("meta.json");
    expect(help.out).not.toContain("HTTP API Options");
  });
});

describe("causeway snapshot save against a short download", () => {
  test("a body shorter than its Content-Length is an error and writes nothing", async () => {
    const short = createSnapshotCommand({
      env: () => ({}),
      readStdin: async () => new Uint8Array(),
      fetch: async () => new Response(CONSUL_SNAP.subarray(0, 10), { headers: { "content-length": String(CONSUL_SNAP.length) } }),
    });
    const file = join(dir, "short.snap");
    expect(await run(short, ["save", file])).toEqual({ code: 1, out: "", err: `Error saving snapshot: incomplete download: got 10 of ${CONSUL_SNAP.length} bytes\n` });
    expect(existsSync(file) || existsSync(`${file}.unverified`)).toBe(false);
  });
});
