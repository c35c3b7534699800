/**
 * Separate hosts on one machine: Linux network namespaces made by the test (as root, with iproute2
 * and nftables), joined by veth pairs, and processes started inside them. Everything a lab creates
 * carries its owner's PID in its name (`<prefix><pid>-<host>`), so `destroy()` removes it by name as
 * well as by PID, and a later run removes what a crashed run left behind (namespaces whose owner
 * PID is gone).
 *
 * Deleting a namespace deletes the veth ends inside it, and with them their peers and routes in
 * the root namespace; so the only state outside the lab's namespaces is none at all.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { ensureDebianCommands } from "./debian.ts";

/** Runs `cmd args`, throwing with its stderr when it fails. Returns its stdout. */
export function run(cmd: string, args: readonly string[], input?: string): string {
  try {
    return execFileSync(cmd, [...args], { encoding: "utf8", input, stdio: ["pipe", "pipe", "pipe"] });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(" ")}: ${e.stderr?.trim() || e.message}`);
  }
}

/**
 * Makes sure the lab's tools are installed: `ip` and `tc` (iproute2), `nft` (nftables) and `curl`, installing
 * the missing Debian packages with apt-get (as root; CI runs as root). Throws, naming what is missing,
 * when they cannot be installed: a lab test never skips.
 */
export function ensureLabTools(): void {
  if (process.getuid?.() !== 0) throw new Error("network-namespace tests need root (ip netns, nftables); CI runs them as root");
  ensureDebianCommands({ ip: "iproute2", tc: "iproute2", nft: "nftables", curl: "curl" }, "the network-namespace tests");
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
};

/** Namespace names that exist now. */
export function listNamespaces(): string[] {
  return run("ip", ["netns", "list"]).split("\n").map((l) => l.split(" ")[0]!).filter(Boolean);
}

/** Kills every process in namespace `ns` and deletes it. Never throws. */
export function removeNamespace(ns: string): void {
  try {
    for (const pid of run("ip", ["netns", "pids", ns]).split(/\s+/).filter(Boolean)) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // already gone
      }
    }
  } catch {
    // no such namespace
  }
  try {
    run("ip", ["netns", "del", ns]);
  } catch {
    // already gone
  }
}

/** A set of namespaces owned by this process; create with `NetLab.create`. */
export class NetLab {
  private readonly namespaces: string[] = [];
  private readonly children: ChildProcess[] = [];
  private links = 0;

  private constructor(readonly prefix: string) {}

  /**
   * A new lab whose names start with `<prefix><pid>-`. First removes the namespaces of earlier labs
   * with the same prefix whose owner process is gone. `prefix` is short letters (names are limited).
   */
  static create(prefix: string): NetLab {
    ensureLabTools();
    for (const ns of listNamespaces()) {
      const m = new RegExp(`^${prefix}(\\d+)-`).exec(ns);
      if (m && !alive(Number(m[1]))) removeNamespace(ns);
    }
    return new NetLab(`${prefix}${process.pid}`);
  }

  /** The full name of host `host` (a namespace). */
  ns(host: string): string {
    return `${this.prefix}-${host}`;
  }

  /** Creates host `host`: a namespace with loopback up and nothing else. */
  addHost(host: string): string {
    const ns = this.ns(host);
    run("ip", ["netns", "add", ns]);
    this.namespaces.push(ns);
    this.ip(host, ["link", "set", "lo", "up"]);
    return ns;
  }

  /** `ip <args>` inside `host` (undefined: the root namespace). */
  ip(host: string | undefined, args: readonly string[]): string {
    return run("ip", host === undefined ? args : ["-n", this.ns(host), ...args]);
  }

  /** Runs `cmd args` inside `host`. */
  exec(host: string, cmd: string, args: readonly string[], input?: string): string {
    return run("ip", ["netns", "exec", this.ns(host), cmd, ...args], input);
  }

  /**
   * A veth pair between `a` and `b` (undefined: the root namespace), named `ifA` and `ifB` in them
   * (a root-namespace end gets a unique name instead), with the given addresses (CIDR) and up.
   * Returns the interface names.
   */
  link(a: { host?: string; ifname: string; addrs: readonly string[] }, b: { host?: string; ifname: string; addrs: readonly string[] }): [string, string] {
    const n = this.links++;
    const tmpA = `${this.prefix.slice(0, 8)}a${n}`;
    const tmpB = `${this.prefix.slice(0, 8)}b${n}`;
    run("ip", ["link", "add", tmpA, "type", "veth", "peer", "name", tmpB]);
    const place = (tmp: string, end: { host?: string; ifname: string; addrs: readonly string[] }) => {
      const name = end.host === undefined ? tmp : end.ifname;
      if (end.host !== undefined) run("ip", ["link", "set", tmp, "netns", this.ns(end.host), "name", name]);
      for (const addr of end.addrs) this.ip(end.host, ["addr", "add", addr, "dev", name]);
      this.ip(end.host, ["link", "set", name, "up"]);
      return name;
    };
    return [place(tmpA, a), place(tmpB, b)];
  }

  /** Applies an nftables script inside `host` (`nft -f -`). */
  nft(host: string, script: string): void {
    this.exec(host, "nft", ["-f", "-"], script);
  }

  /** Sets a sysctl inside `host`. */
  sysctl(host: string, key: string, value: string): void {
    this.exec(host, "sysctl", ["-q", "-w", `${key}=${value}`]);
  }

  /** Starts `cmd args` inside `host` (as the same PID: `ip netns exec` execs); killed by `destroy`. */
  spawn(host: string, cmd: string, args: readonly string[], env: Record<string, string> = {}): ChildProcess {
    const child = spawn("ip", ["netns", "exec", this.ns(host), cmd, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1", ...env } });
    this.children.push(child);
    return child;
  }

  /** Kills every process started here (by PID) and in the namespaces (by name), then deletes the namespaces. */
  destroy(): void {
    for (const c of this.children) {
      if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    }
    for (const ns of this.namespaces.splice(0)) removeNamespace(ns);
  }
}
