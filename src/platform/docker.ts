/**
 * The Docker Engine API client of Docker checks (it satisfies src/agent's DockerEngine structurally):
 * plain HTTP/1.1 over the Docker socket, found as Consul finds it: DOCKER_HOST ("unix:///path" or
 * "tcp://host:port[/base]"), else unix:///var/run/docker.sock. Bodies keep only their tail.
 */
import * as http from "node:http";
import { statSync } from "node:fs";
import { TailBuffer } from "./process.ts";

/** Consul's DefaultDockerHost on Unix. */
export const DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock";

export interface DockerEngineClient {
  /** Why the API cannot be reached (unparsable DOCKER_HOST, no socket file), or undefined. Looks at the disk each time. */
  unavailable(): string | undefined;
  call(method: "GET" | "POST", path: string, body: unknown, maxBytes: number): Promise<{ status: number; body: string; totalBytes: number }>;
}

type DockerTarget = { kind: "unix"; path: string } | { kind: "tcp"; host: string; port: number; base: string } | { kind: "bad"; error: string };

/** Consul's ParseHost: "<proto>://<addr>"; tcp addresses may carry a base path. */
export function parseDockerHost(host: string): DockerTarget {
  const sep = host.indexOf("://");
  if (sep < 0) return { kind: "bad", error: `unable to parse docker host \`${host}\`` };
  const proto = host.slice(0, sep), addr = host.slice(sep + 3);
  if (proto === "unix") return { kind: "unix", path: addr };
  if (proto === "tcp") {
    try {
      const u = new URL(`http://${addr}`);
      return { kind: "tcp", host: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port || 2375), base: u.pathname === "/" ? "" : u.pathname };
    } catch {
      return { kind: "bad", error: `unable to parse docker host \`${host}\`` };
    }
  }
  return { kind: "bad", error: `Docker host protocol ${JSON.stringify(proto)} is not supported here (use unix:// or tcp://)` };
}

/** A client for `host` ("" means DOCKER_HOST from the environment, else the default socket). */
export function dockerEngineClient(host: string = process.env.DOCKER_HOST ?? ""): DockerEngineClient {
  const spec = host || DEFAULT_DOCKER_HOST;
  const target = parseDockerHost(spec);
  const where = host ? `DOCKER_HOST is ${JSON.stringify(host)}` : "DOCKER_HOST is not set";
  return {
    unavailable() {
      if (target.kind === "bad") return `Docker checks cannot run on this agent: ${target.error}`;
      if (target.kind === "tcp") return undefined;
      let isSocket: boolean;
      try {
        isSocket = statSync(target.path).isSocket();
      } catch {
        return `Docker checks cannot run on this agent: there is no Docker socket at ${target.path} (${where})`;
      }
      return isSocket ? undefined : `Docker checks cannot run on this agent: ${target.path} is not a socket (${where})`;
    },
    call(method, path, body, maxBytes) {
      return new Promise((resolve, reject) => {
        if (target.kind === "bad") return reject(new Error(target.error));
        const payload = body === undefined ? undefined : JSON.stringify(body) + "\n";
        const url = target.kind === "unix" ? `http://docker${path}` : `http://${target.host}:${target.port}${target.base}${path}`;
        const req = http.request({
          method,
          path: target.kind === "tcp" ? target.base + path : path,
          ...(target.kind === "unix" ? { socketPath: target.path } : { host: target.host, port: target.port }),
          headers: {
            Host: target.kind === "unix" ? "docker" : `${target.host}:${target.port}`,
            ...(payload !== undefined ? { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(payload)) } : {}),
          },
          agent: false,
        }, (res) => {
          const tail = new TailBuffer(maxBytes);
          res.on("data", (d: Buffer) => tail.write(d));
          const done = () => resolve({ status: res.statusCode ?? 0, body: tail.text(), totalBytes: tail.total });
          res.on("end", done);
          // Consul ignores a reset after the answer was received (its todo on exec start).
          res.on("error", (err: NodeJS.ErrnoException) => (err.code === "ECONNRESET" ? done() : reject(err)));
        });
        req.on("error", (err: NodeJS.ErrnoException) => {
          const dial = target.kind === "unix" ? `dial unix ${target.path}` : `dial tcp ${target.host}:${target.port}`;
          const reason = err.code === "ENOENT" ? "connect: no such file or directory"
            : err.code === "ECONNREFUSED" ? "connect: connection refused"
            : err.code === "EACCES" ? "connect: permission denied" : err.message;
          reject(new Error(`${method.slice(0, 1)}${method.slice(1).toLowerCase()} ${JSON.stringify(url)}: ${dial}: ${reason}`));
        });
        req.end(payload);
      });
    },
  };
}
