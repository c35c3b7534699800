/**
 * Small disks for the nemesis's servers: each server's data dir is a tmpfs of its own, which a fault
 * fills (a filler file takes every free page: the server's next log write fails with ENOSPC) and a
 * heal empties again. As root (mount). Each mount's work dir names its owner PID (`owner.pid`), so a
 * later run unmounts what a crashed run left behind, and `unmountAll` removes this run's by path.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run } from "../harness/netns.ts";

/** Big enough for a long run's Raft log segments and snapshots at the nemesis's load. */
const DISK_BYTES = 256 * 1024 * 1024;
const PREFIX = "causeway-nemesis-";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Mount points of tmpfs file systems under the temp dir's nemesis work dirs. */
function nemesisMounts(): string[] {
  const root = join(tmpdir(), PREFIX);
  return readFileSync("/proc/mounts", "utf8").split("\n").map((l) => l.split(" ")).filter((f) => f[2] === "tmpfs" && f[1]?.startsWith(root)).map((f) => f[1]!);
}

export class NemesisDisks {
  private readonly mounts: string[] = [];

  /** Unmounts the disks of earlier runs whose owner process is gone; records this run as `work`'s owner. */
  constructor(private readonly work: string) {
    for (const m of nemesisMounts()) {
      const owner = join(m.slice(0, m.indexOf("/", join(tmpdir(), PREFIX).length)), "owner.pid");
      const pid = existsSync(owner) ? Number(readFileSync(owner, "utf8")) : NaN;
      if (!(pid > 0 && alive(pid))) run("umount", ["-l", m]);
    }
    writeFileSync(join(work, "owner.pid"), String(process.pid));
  }

  /** Makes `dir` a fresh tmpfs disk of DISK_BYTES. */
  mount(dir: string): void {
    mkdirSync(dir, { recursive: true });
    run("mount", ["-t", "tmpfs", "-o", `size=${DISK_BYTES},mode=0700`, "causeway-nemesis", dir]);
    this.mounts.push(dir);
  }

  /** Takes every free byte of `dir`'s disk. */
  fill(dir: string): void {
    // dd stops at ENOSPC (exit 1): by then every page is taken.
    try {
      run("dd", ["if=/dev/zero", `of=${join(dir, "filler")}`, "bs=1M"]);
    } catch {
      // full
    }
  }

  /** Gives the space back. */
  empty(dir: string): void {
    rmSync(join(dir, "filler"), { force: true });
  }

  unmountAll(): void {
    for (const m of this.mounts.splice(0)) {
      try {
        run("umount", ["-l", m]);
      } catch {
        // already gone
      }
    }
  }
}
