import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnCheckProcess, TailBuffer } from "./process.ts";

const failure = (p: Promise<unknown>) => p.then(() => "resolved", (e: Error) => e.message);

/** True once `pid` is gone or a zombie (killed; its reaper may be slow). */
function dead(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

describe("spawnCheckProcess", () => {
  test("runs args without a shell; stdout and stderr are interleaved; the exit code comes back", async () => {
    const r = await spawnCheckProcess({ args: ["sh", "-c", "echo out; echo err >&2; exit 3"], maxOutputBytes: 4096 }).done;
    expect(r.code).toBe(3);
    expect(r.output.split("\n").sort()).toEqual(["", "err", "out"]);
    expect(r.totalBytes).toBe(8);
    const literal = await spawnCheckProcess({ args: ["echo", "$HOME", "a;b"], maxOutputBytes: 4096 }).done;
    expect([literal.code, literal.output]).toEqual([0, "$HOME a;b\n"]);
  });

  test("keeps only the tail of long output and counts all of it", async () => {
    const r = await spawnCheckProcess({ args: ["sh", "-c", "i=0; while [ $i -lt 2000 ]; do printf 'line %04d\\n' $i; i=$((i+1)); done"], maxOutputBytes: 20 }).done;
    expect(r.totalBytes).toBe(2000 * 10);
    expect(r.output).toBe("line 1998\nline 1999\n");
  });

  test("a command that cannot start rejects with Go's wording", async () => {
    expect(await failure(spawnCheckProcess({ args: ["causeway-no-such-command"], maxOutputBytes: 10 }).done))
      .toBe('exec: "causeway-no-such-command": executable file not found in $PATH');
    expect(await failure(spawnCheckProcess({ args: ["/nonexistent/check"], maxOutputBytes: 10 }).done))
      .toBe("fork/exec /nonexistent/check: no such file or directory");
    expect(await failure(spawnCheckProcess({ args: [], maxOutputBytes: 10 }).done)).toBe("exec: no command");
  });

  test("kill() ends the whole process group, grandchildren included", async () => {
    const dir = mkdtempSync(join(tmpdir(), "causeway-proc-"));
    const pidFile = join(dir, "pid");
    const p = spawnCheckProcess({ args: ["sh", "-c", `sleep 60 & echo $! > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; wait`], maxOutputBytes: 100 });
    const read = () => {
      try {
        return Number(readFileSync(pidFile, "utf8").trim());
      } catch {
        return 0;
      }
    };
    // The grandchild's PID appears once it runs (bounded by the test timeout).
    while (read() === 0) await new Promise((r) => setTimeout(r, 10));
    const grandchild = read();
    rmSync(dir, { recursive: true, force: true });
    p.kill();
    const r = await p.done;
    expect(r.code).toBeNull();
    const end = performance.now() + 3000;
    while (!dead(grandchild) && performance.now() < end) await new Promise((res) => setTimeout(res, 20));
    expect(dead(grandchild)).toBe(true);
    p.kill(); // idempotent after exit
  });
});

describe("TailBuffer", () => {
  test("keeps the last bytes across many writes", () => {
    const b = new TailBuffer(5);
    for (let i = 0; i < 50_000; i++) b.write(new TextEncoder().encode(String(i % 10)));
    expect([b.text(), b.total]).toEqual(["56789", 50_000]);
    const none = new TailBuffer(0);
    none.write(new Uint8Array(3));
    expect([none.text(), none.total]).toEqual(["", 3]);
  });
});
