import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createServicesCommand } from "../services.ts";
import { servicesFromDocument } from "./definition.ts";

let agent: RecordingAgent;
let services: ReturnType<typeof createServicesCommand>;
const dir = mkdtempSync(join(tmpdir(), "cw-svc-"));
const file = (name: string, doc: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof doc === "string" ? doc : JSON.stringify(doc));
  return path;
};
const OK = { "PUT /v1/agent/service/register": { body: "" } };

beforeAll(async () => {
  agent = await startRecordingAgent();
  services = createServicesCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url }), readStdin: async () => new Uint8Array() });
});
afterAll(() => agent.close());

describe("service definition files", () => {
  test("snake_case config keys become the API's PascalCase; user-keyed maps keep their keys", () => {
    const [svc] = servicesFromDocument(
      {
        service: {
          id: "web-1", name: "web", port: 8080, enable_tag_override: true, meta: { owner_team: "a" },
          tagged_addresses: { lan_ipv4: { address: "10.0.0.1", port: 80 } },
          check: { id: "web-http", http: "http://localhost:8080/health", interval: "10s", tls_skip_verify: true, header: { "x-api_key": ["k"] } },
          checks: [{ args: ["/bin/check"], grpc_use_tls: true, deregister_critical_service_after: "1m" }],
          connect: { sidecar_service: { port: 21000, proxy: { upstreams: [{ destination_name: "db", local_bind_port: 9191, config: { connect_timeout_ms: 5 } }] } } },
        },
      },
      "web.json",
    );
    expect(svc).toEqual({
      ID: "web-1", Name: "web", Port: 8080, EnableTagOverride: true, Meta: { owner_team: "a" },
      TaggedAddresses: { lan_ipv4: { Address: "10.0.0.1", Port: 80 } },
      Check: { CheckID: "web-http", HTTP: "http://localhost:8080/health", Interval: "10s", TLSSkipVerify: true, Header: { "x-api_key": ["k"] } },
      Checks: [{ ScriptArgs: ["/bin/check"], GRPCUseTLS: true, DeregisterCriticalServiceAfter: "1m" }],
      Connect: { SidecarService: { Port: 21000, Proxy: { Upstreams: [{ DestinationName: "db", LocalBindPort: 9191, Config: { connect_timeout_ms: 5 } }] } } },
    });
  });

  test("a services array, PascalCase input, and errors for documents without services", () => {
    expect(servicesFromDocument({ services: [{ Name: "a" }, { name: "b" }] }, "f")).toEqual([{ Name: "a" }, { Name: "b" }]);
    expect(() => servicesFromDocument({ datacenter: "dc1" }, "f.json")).toThrow('f.json: no "service" or "services" block');
    expect(() => servicesFromDocument([], "f.json")).toThrow("must hold a JSON object");
  });
});

describe("causeway services register", () => {
  test("from flags: PUT /v1/agent/service/register with the registration JSON", async () => {
    agent.reset(OK);
    const { code, out, err } = await run(services, ["register", "-name=web", "-id=web-1", "-address=10.0.0.5", "-port=8080", "-tag=v1", "-tag", "blue", "-meta=team=a", "-datacenter=dc1"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toBe("Registered service: web\n");
    expect(agent.lines()).toEqual(["PUT /v1/agent/service/register?dc=dc1"]);
    expect(JSON.parse(agent.requests[0]!.text)).toEqual({ ID: "web-1", Name: "web", Tags: ["v1", "blue"], Port: 8080, Address: "10.0.0.5", Meta: { team: "a" } });
  });

  test("only -name: no ID, so the agent defaults it to the name", async () => {
    agent.reset(OK);
    await run(services, ["register", "-name=web"]);
    expect(agent.requests[0]!.text).toBe('{"Name":"web"}');
  });

  test("from files: each service registered in order, flags filling in and adding tags", async () => {
    agent.reset(OK);
    const a = file("a.json", { service: { name: "web", port: 80, tags: ["x"] } });
    const b = file("b.json", { services: [{ name: "db", id: "db-1", address: "10.0.0.9" }] });
    const { code, out } = await run(services, ["register", "-address=10.0.0.1", "-tag=extra", a, b]);
    expect(code).toBe(0);
    expect(out).toBe("Registered service: web\nRegistered service: db\n");
    expect(agent.requests.map((r) => JSON.parse(r.text))).toEqual([
      { Name: "web", Port: 80, Tags: ["x", "extra"], Address: "10.0.0.1" },
      { Name: "db", ID: "db-1", Address: "10.0.0.9", Tags: ["extra"] },
    ]);
  });

  test("Consul's argument checks and file errors", async () => {
    agent.reset(OK);
    expect(await run(services, ["register"])).toEqual({ code: 1, out: "", err: "Service registration requires at least one argument or flags.\n" });
    expect(await run(services, ["register", "-name=x", "f.json"])).toEqual({ code: 1, out: "", err: "Service registration requires arguments or -id, not both.\n" });
    expect((await run(services, ["register", join(dir, "missing.json")])).err).toStartWith(`Error: Error reading "${join(dir, "missing.json")}": `);
    expect((await run(services, ["register", file("bad.json", "{")])).err).toStartWith(`Error: Error parsing ${join(dir, "bad.json")}: `);
    expect((await run(services, ["register", file("web.hcl", "service {}")])).err).toBe(`Error: ${join(dir, "web.hcl")}: HCL service definitions are not supported; use JSON\n`);
    expect((await run(services, ["register", "-name=x", "-meta=novalue"])).err).toStartWith('invalid value "novalue" for flag -meta: Missing "=" value in argument: novalue\n');
    expect((await run(services, ["register", "-name=x", "-port=abc"])).err).toStartWith('invalid value "abc" for flag -port: not an integer\n');
    expect(agent.requests).toEqual([]);
  });

  test("an agent error names the service, exit 1, and stops", async () => {
    agent.reset({ "PUT /v1/agent/service/register": { status: 400, body: "Invalid Service Meta: Couldn't load metadata pair" } });
    const f = file("two.json", { services: [{ name: "a" }, { name: "b" }] });
    expect(await run(services, ["register", f])).toEqual({ code: 1, out: "", err: 'Error registering service "a": Unexpected response code: 400 (Invalid Service Meta: Couldn\'t load metadata pair)\n' });
    expect(agent.requests.length).toBe(1);
  });
});

describe("causeway services deregister", () => {
  test("-id: PUT /v1/agent/service/deregister/<id>", async () => {
    agent.reset({ "PUT /v1/agent/service/deregister/web%201": { body: "" } });
    expect(await run(services, ["deregister", "-id=web 1"])).toEqual({ code: 0, out: "Deregistered service: web 1\n", err: "" });
    expect(agent.lines()).toEqual(["PUT /v1/agent/service/deregister/web%201"]);
  });

  test("files: the ID, else the name, of each service", async () => {
    agent.reset({ "PUT /v1/agent/service/deregister/web-1": { body: "" }, "PUT /v1/agent/service/deregister/db": { body: "" } });
    const f = file("both.json", { services: [{ id: "web-1", name: "web" }, { name: "db" }, {}] });
    expect(await run(services, ["deregister", f])).toEqual({ code: 0, out: "Deregistered service: web-1\nDeregistered service: db\n", err: "" });
  });

  test("argument checks; an unknown service is the agent's 404, exit 1", async () => {
    agent.reset();
    expect(await run(services, ["deregister"])).toEqual({ code: 1, out: "", err: "Service deregistration requires at least one argument or -id.\n" });
    expect(await run(services, ["deregister", "-id=x", "f.json"])).toEqual({ code: 1, out: "", err: "Service deregistration requires arguments or -id, not both.\n" });
    expect(await run(services, ["deregister", "-id=nope"])).toEqual({ code: 1, out: "", err: 'Error deregistering service "nope": Unexpected response code: 404 (not found)\n' });
  });
});

describe("causeway services", () => {
  test("help", async () => {
    expect((await run(services, ["-h"])).out).toContain("    deregister    Deregister services with the local agent\n    register      Register services with the local agent\n");
    expect((await run(services, ["register", "--help"])).out).toContain("Usage: causeway services register [options] [FILE...]");
  });
});
