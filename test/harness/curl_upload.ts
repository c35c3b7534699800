/**
 * Large request bodies sent by a real client (curl, in its own process, fed from /dev/zero through a
 * pipe so that no file of that size is written), and a process's resident memory read from
 * /proc/<pid>/status while they stream.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";

export interface CurlUpload {
  /** The HTTP status curl got ("000" when the connection ended without an answer). */
  readonly code: string;
  /** Body bytes curl sent before the answer (or the end of the connection). */
  readonly uploaded: number;
  /** The answer's body. */
  readonly body: string;
  readonly ms: number;
}

/**
 * PUTs `bytes` zero bytes to `url`: declared (Content-Length) or chunked; with `expect` curl first asks
 * for `100 Continue`, as it does by itself for large bodies (default: no, the body follows at once).
 * `bytesPerSecond` caps curl's send rate (`--limit-rate`), so that "answered before the body was sent"
 * is a fact about the server and not a race with loopback's speed.
 */
export function curlUpload(url: string, bytes: number, o: { chunked?: boolean; expect?: boolean; bytesPerSecond?: number } = {}): Promise<CurlUpload> {
  const headers = [
    o.expect ? "Expect: 100-continue" : "Expect:",
    ...(o.chunked ? ["Transfer-Encoding: chunked"] : ["Transfer-Encoding:", `Content-Length: ${bytes}`]),
  ];
  const rate = o.bytesPerSecond === undefined ? [] : ["--limit-rate", String(Math.floor(o.bytesPerSecond))];
  const curl = ["curl", "-s", "-S", "--max-time", "60", ...rate, "-X", "PUT", "-T", "-", ...headers.flatMap((h) => ["-H", `'${h}'`]),
    "-w", "'\\n%{http_code} %{size_upload}'", `'${url}'`].join(" ");
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", `head -c ${bytes} /dev/zero | ${curl}`], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", () => {
      const at = out.lastIndexOf("\n");
      const [code = "000", uploaded = "0"] = out.slice(at + 1).split(" ");
      resolve({ code, uploaded: Number(uploaded), body: out.slice(0, Math.max(0, at)), ms: performance.now() - started });
    });
  });
}

/** Resident memory of process `pid` now, in bytes (VmRSS). */
export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Samples `pid`'s RSS every `everyMs` while `work` runs; resolves with its result and the highest RSS seen. */
export async function peakRssDuring<T>(pid: number, work: () => Promise<T>, everyMs = 10): Promise<{ result: T; peak: number }> {
  let peak = await rssBytes(pid);
  let running = true;
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, await rssBytes(pid).catch(() => 0));
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  try {
    const result = await work();
    return { result, peak: Math.max(peak, await rssBytes(pid)) };
  } finally {
    running = false;
    await sampler;
  }
}
