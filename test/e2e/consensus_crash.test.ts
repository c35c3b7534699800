/**
 * Real disk, real process crash: a writer process is killed with SIGKILL while 64 proposals are in
 * flight; after a restart from the same directory every acknowledged write is still there.
 */
import { afterAll, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const fixture = join(import.meta.dir, "fixtures", "raft_writer.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-crash-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("no acknowledged write is lost when the process is killed mid-write (3 rounds)", async () => {
  const dir = join(work, "data");
  const acked = new Set<number>();
  for (let round = 0; round < 3; round++) {
    const child = spawn(process.execPath, [fixture, "write", dir, String(round * 1_000_000)], { stdio: ["ignore", "pipe", "pipe"] });
    let buf = "";
    let errors = "";
    child.stderr.on("data", (d) => (errors += d));
    const target = acked.size + 300 + round * 100;
    await new Promise<void>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error(`writer made no progress: ${errors}`)), 30_000);
      child.stdout.on("data", (d: Buffer) => {
        buf += d.toString();
        const lines = buf.split("\n");
        buf = lines.pop()!;
        for (const l of lines) if (l.startsWith("ack ")) acked.add(Number(l.slice(4)));
        if (acked.size >= target && child.exitCode === null) {
          child.kill("SIGKILL");
          clearTimeout(guard);
          resolve();
        }
      });
      child.on("exit", () => resolve());
    });
    await new Promise((r) => child.once("close", r));
    // Acks that were still in the pipe when the process died were also applied before it died.
    for (const l of buf.split("\n")) if (l.startsWith("ack ")) acked.add(Number(l.slice(4)));
    const dump = spawnSync(process.execPath, [fixture, "dump", dir], { encoding: "utf8", timeout: 30_000 });
    expect(dump.status).toBe(0);
    const present = new Set<number>(JSON.parse(dump.stdout.trim().split("\n").pop()!));
    const lost = [...acked].filter((k) => !present.has(k));
    expect(lost).toEqual([]);
  }
}, 120_000);
