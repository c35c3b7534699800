/**
 * Keep-alive check for the KV benchmark: which TCP connections does THIS process hold to a set of
 * ports, read from /proc (Linux only; every function returns null elsewhere). A phase watch reports
 * how many connections were opened while it ran and how many were closed (new TIME_WAIT entries on
 * those ports), so a client that silently reconnects per request is caught rather than measured.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

interface TcpEntry { readonly tuple: string; readonly localPort: number; readonly remotePort: number; readonly state: string; readonly inode: string }

const ESTABLISHED = "01";
const TIME_WAIT = "06";

function readTcpTable(): TcpEntry[] | null {
  const entries: TcpEntry[] = [];
  let any = false;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    any = true;
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const port = (addr: string) => parseInt(addr.slice(addr.lastIndexOf(":") + 1), 16);
      entries.push({ tuple: `${f[1]}-${f[2]}`, localPort: port(f[1]!), remotePort: port(f[2]!), state: f[3]!, inode: f[9]! });
    }
  }
  return any ? entries : null;
}

function ownSocketInodes(): Set<string> | null {
  try {
    const inodes = new Set<string>();
    for (const fd of readdirSync("/proc/self/fd")) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
        if (m) inodes.add(m[1]!);
      } catch {
        // The fd closed between readdir and readlink.
      }
    }
    return inodes;
  } catch {
    return null;
  }
}

interface Sample { readonly established: Set<string>; readonly timeWait: Set<string> }

function sample(ports: ReadonlySet<number>): Sample | null {
  const table = readTcpTable();
  const own = ownSocketInodes();
  if (!table || !own) return null;
  const established = new Set<string>();
  const timeWait = new Set<string>();
  for (const e of table) {
    if (e.state === ESTABLISHED && ports.has(e.remotePort) && own.has(e.inode)) established.add(e.inode);
    // TIME_WAIT sockets belong to no process; on a benchmark port they are closed benchmark connections
    // (client side if the client closed, server side if the server did).
    if (e.state === TIME_WAIT && (ports.has(e.remotePort) || ports.has(e.localPort))) timeWait.add(e.tuple);
  }
  return { established, timeWait };
}

/** What a phase did to connections: opened = new own connections, closed = new TIME_WAITs, peak = most open at once. */
export interface ConnReport { readonly opened: number; readonly closed: number; readonly peak: number }

/** Samples every `everyMs` until stop(); stop() returns null when /proc is not readable. */
export function watchConnections(ports: readonly number[], everyMs = 200): { stop(): ConnReport | null } {
  const set = new Set(ports);
  const before = sample(set);
  if (!before) return { stop: () => null };
  const seen = new Set<string>();
  const tw = new Set<string>();
  let peak = 0;
  const take = () => {
    const s = sample(set);
    if (!s) return;
    for (const i of s.established) if (!before.established.has(i)) seen.add(i);
    for (const t of s.timeWait) if (!before.timeWait.has(t)) tw.add(t);
    peak = Math.max(peak, s.established.size);
  };
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return { opened: seen.size, closed: tw.size, peak };
    },
  };
}
