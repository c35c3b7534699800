/**
 * Real peers and tools from Debian for tests: a command missing from PATH is installed with apt-get
 * (as root; CI runs as root). A test that needs one never skips: it installs it or fails naming it.
 */
import { execFileSync } from "node:child_process";

/** Whether `cmd` is on PATH. */
export function onPath(cmd: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure every command of `packages` (command -> Debian package) is on PATH, installing the missing
 * packages. Throws naming `purpose` and what is missing when that cannot be done.
 */
export function ensureDebianCommands(packages: Readonly<Record<string, string>>, purpose: string): void {
  const missing = Object.keys(packages).filter((c) => !onPath(c));
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) throw new Error(`${purpose} need ${missing.join(", ")}; install the Debian packages ${[...new Set(missing.map((c) => packages[c]!))].join(" ")} (or run as root, as CI does)`);
  const apt = (args: string[]) => execFileSync("apt-get", args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  try {
    apt(["update", "-qq"]);
    apt(["install", "-y", "-qq", "--no-install-recommends", ...new Set(missing.map((c) => packages[c]!))]);
  } catch (err) {
    throw new Error(`${purpose}: apt-get failed: ${(err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message}`);
  }
  const still = missing.filter((c) => !onPath(c));
  if (still.length) throw new Error(`could not install ${still.join(", ")} for ${purpose}`);
}
