import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as http from "node:http";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dockerEngineClient, parseDockerHost } from "./docker.ts";

// A fake Docker Engine on a unix socket: records requests and answers the exec endpoints.
const dir = mkdtempSync(join(tmpdir(), "causeway-docker-"));
const socket = join(dir, "docker.sock");
const seen: { method: string; url: string; host: string; type: string; body: string }[] = [];
let server: http.Server;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, host: req.headers.host ?? "", type: req.headers["content-type"] ?? "", body });
      if (req.url === "/containers/c1/exec") return void res.writeHead(201).end('{"Id":"e1"}');
      if (req.url === "/exec/e1/start") return void res.writeHead(200).end("x".repeat(100) + "tail");
      res.writeHead(404).end("no such exec");
    });
  });
  await new Promise<void>((r) => server.listen(socket, r));
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("dockerEngineClient", () => {
  test("talks HTTP over the unix socket of DOCKER_HOST, keeping the tail of bodies", async () => {
    const c = dockerEngineClient(`unix://${socket}`);
    expect(c.unavailable()).toBeUndefined();
    expect(await c.call("POST", "/containers/c1/exec", { Cmd: ["true"] }, 4096)).toEqual({ status: 201, body: '{"Id":"e1"}', totalBytes: 11 });
    expect(seen.at(-1)).toEqual({ method: "POST", url: "/containers/c1/exec", host: "docker", type: "application/json", body: '{"Cmd":["true"]}\n' });
    expect(await c.call("POST", "/exec/e1/start", {}, 4)).toEqual({ status: 200, body: "tail", totalBytes: 104 });
    expect(await c.call("GET", "/exec/zz/json", undefined, 4096)).toMatchObject({ status: 404, body: "no such exec" });
    expect(seen.at(-1)).toMatchObject({ method: "GET", type: "", body: "" });
  });

  test("no socket: a clear reason naming the path, and calls fail with Go-style dial errors", async () => {
    const missing = join(dir, "nope.sock");
    const c = dockerEngineClient(`unix://${missing}`);
    expect(c.unavailable()).toBe(`Docker checks cannot run on this agent: there is no Docker socket at ${missing} (DOCKER_HOST is "unix://${missing}")`);
    expect(await c.call("GET", "/exec/e/json", undefined, 10).then(() => "ok", (e: Error) => e.message))
      .toBe(`Get "http://docker/exec/e/json": dial unix ${missing}: connect: no such file or directory`);
    const file = join(dir, "plain");
    writeFileSync(file, "");
    expect(dockerEngineClient(`unix://${file}`).unavailable()).toBe(`Docker checks cannot run on this agent: ${file} is not a socket (DOCKER_HOST is "unix://${file}")`);
  });

  test("DOCKER_HOST forms (Consul's ParseHost)", () => {
    expect(parseDockerHost("unix:///var/run/docker.sock")).toEqual({ kind: "unix", path: "/var/run/docker.sock" });
    expect(parseDockerHost("tcp://10.0.0.5:2376/base")).toEqual({ kind: "tcp", host: "10.0.0.5", port: 2376, base: "/base" });
    expect(parseDockerHost("docker.sock")).toEqual({ kind: "bad", error: "unable to parse docker host `docker.sock`" });
    expect(dockerEngineClient("docker.sock").unavailable()).toBe("Docker checks cannot run on this agent: unable to parse docker host `docker.sock`");
    expect(dockerEngineClient("tcp://127.0.0.1:2375").unavailable()).toBeUndefined();
  });

  test.skipIf(existsSync("/var/run/docker.sock"))("without DOCKER_HOST the default socket is used, and named when missing", () => {
    expect(dockerEngineClient("").unavailable())
      .toBe("Docker checks cannot run on this agent: there is no Docker socket at /var/run/docker.sock (DOCKER_HOST is not set)");
  });
});
