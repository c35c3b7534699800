/**
 * nginx as the peer SNI proxy of the gateway benchmark: the stream module with `ssl_preread`, routing by
 * `$ssl_preread_server_name` to the same TLS backends, one worker process (the gateway is one
 * single-threaded process too), started from a temp prefix and killed by PID.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The nginx binary, or undefined when it is not installed. */
export function nginxBinary(): string | undefined {
  for (const p of ["/usr/sbin/nginx", "/usr/bin/nginx"]) if (existsSync(p)) return p;
  const which = spawnSync("sh", ["-c", "command -v nginx"], { encoding: "utf8" });
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : undefined;
}

/** The dynamic stream module Debian ships separately (libnginx-mod-stream), if any. */
function streamModule(): string | undefined {
  return ["/usr/lib/nginx/modules/ngx_stream_module.so", "/usr/share/nginx/modules/ngx_stream_module.so"].find((p) => existsSync(p));
}

export interface RunningNginx {
  readonly port: number;
  readonly pid: number;
  readonly version: string;
  stop(): void;
}

/** Starts nginx on `port` routing each SNI of `routes` to its backend port. */
export async function startNginx(binary: string, port: number, routes: ReadonlyMap<string, number>): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), "causeway-bench-nginx-"));
  const module = streamModule();
  const map = [...routes].map(([sni, p]) => `    ${sni} 127.0.0.1:${p};`).join("\n");
  writeFileSync(join(dir, "nginx.conf"), `${module ? `load_module ${module};\n` : ""}daemon off;
master_process off;
worker_processes 1;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 4096; }
stream {
  map $ssl_preread_server_name $backend {
${map}
  }
  server {
    listen 127.0.0.1:${port} reuseport;
    ssl_preread on;
    proxy_pass $backend;
    proxy_connect_timeout 5s;
  }
}
`);
  const version = (spawnSync(binary, ["-v"], { encoding: "utf8" }).stderr ?? "").trim();
  const child: ChildProcess = spawn(binary, ["-p", dir, "-c", join(dir, "nginx.conf")], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d) => (err += String(d)));
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  // Ready when the port accepts.
  const net = await import("node:net");
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) break;
    const ok = await new Promise<boolean>((r) => {
      const s = net.connect({ host: "127.0.0.1", port }, () => (s.destroy(), r(true)));
      s.on("error", () => r(false));
    });
    if (ok) return { port, pid: child.pid!, version, stop };
    await new Promise((r) => setTimeout(r, 25));
  }
  stop();
  throw new Error(`nginx did not start: ${err}`);
}
