/**
 * Machine facts and process measurements shared by the benchmarks (Linux /proc; elsewhere the
 * functions answer "?" or null): which file system a directory is on, how many fsync'd appends per
 * second its disk takes, the resident memory and CPU time of a process, the bytes a directory holds,
 * and the open-files limit (raised with prlimit when a benchmark needs many sockets).
 */
import { spawnSync } from "node:child_process";
import { closeSync, fsyncSync, lstatSync, openSync, readdirSync, readFileSync, realpathSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/** The file system type (ext4, tmpfs...) of the mount holding `path`, or "?". */
export function filesystemOf(path: string): string {
  try {
    const real = realpathSync(path);
    let best = { dir: "", type: "?" };
    for (const line of readFileSync("/proc/mounts", "utf8").split("\n")) {
      const [, dir, type] = line.split(" ");
      if (dir && type && (real === dir || real.startsWith(dir.endsWith("/") ? dir : `${dir}/`)) && dir.length >= best.dir.length) best = { dir, type };
    }
    return best.type;
  } catch {
    return "?";
  }
}

/** fsync'd `bytes`-byte appends per second in `dir` for `ms` (what one unbatched log write costs on this disk). */
export function fsyncRate(dir: string, ms: number, bytes: number): number {
  const file = join(dir, `causeway-bench-fsync-${process.pid}`);
  const fd = openSync(file, "a");
  const buf = new Uint8Array(bytes);
  let n = 0;
  const end = performance.now() + ms;
  try {
    while (performance.now() < end) {
      writeSync(fd, buf);
      fsyncSync(fd);
      n++;
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  return (n * 1000) / ms;
}

function statusKb(pid: number | undefined, field: string): number | null {
  if (pid === undefined) return null;
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Resident memory of process `pid` in bytes (VmRSS of /proc/<pid>/status), or null when unreadable. */
export const rssBytes = (pid: number | undefined): number | null => statusKb(pid, "VmRSS");

/** The most resident memory process `pid` has had so far (VmHWM), or null when unreadable. */
export const peakRssBytes = (pid: number | undefined): number | null => statusKb(pid, "VmHWM");

/** CPU time (user + system) process `pid` has used so far, in ms, or null when unreadable. */
export function cpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15 (in clock ticks, 100/s on Linux).
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return null;
  }
}

/** Bytes of the regular files under `dir` (apparent sizes; 0 when it does not exist). */
export function dirBytes(dir: string): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of entries) {
    const p = join(dir, name);
    try {
      const st = lstatSync(p);
      if (st.isDirectory()) total += dirBytes(p);
      else if (st.isFile()) total += st.size;
    } catch {
      // Removed while we looked (log segments come and go).
    }
  }
  return total;
}

/** This process's open-files limit (soft and hard), or null when /proc/self/limits is unreadable. */
export function openFilesLimit(): { soft: number; hard: number } | null {
  try {
    const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (!m) return null;
    const n = (s: string) => (s === "unlimited" ? Number.POSITIVE_INFINITY : Number(s));
    return { soft: n(m[1]!), hard: n(m[2]!) };
  } catch {
    return null;
  }
}

/**
 * Makes sure this process may open `wanted` files, raising its limit with `prlimit --pid` (util-linux)
 * when it is lower: up to the hard limit as any user, past it only as root. Processes started later
 * inherit the new limit. Returns what was done, for the report; throws when the limit stays too low.
 */
export function ensureOpenFiles(wanted: number): string {
  const now = openFilesLimit();
  if (!now) return "open-files limit unknown (no /proc/self/limits)";
  if (now.soft >= wanted) return `open-files limit ${now.soft} already enough (needed ${wanted})`;
  const hard = Math.max(now.hard, wanted);
  const r = spawnSync("prlimit", ["--pid", String(process.pid), `--nofile=${wanted}:${hard === Number.POSITIVE_INFINITY ? "unlimited" : hard}`], { encoding: "utf8" });
  const after = openFilesLimit();
  if (!after || after.soft < wanted) {
    throw new Error(`open-files limit ${now.soft} (hard ${now.hard}) is below the ${wanted} needed and prlimit could not raise it: ${(r.error?.message ?? r.stderr).trim() || `exit ${r.status}`}; run \`ulimit -n ${wanted}\` first`);
  }
  return `open-files limit raised from ${now.soft} to ${after.soft} with \`prlimit --pid <bench> --nofile=${wanted}:...\` (servers started afterwards inherit it)`;
}
