import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseCertificate } from "../../lib/index.ts";
import { seededRng } from "../../platform/index.ts";
import { createTlsCommand } from "./tls.ts";

const root = mkdtempSync(join(tmpdir(), "causeway-tls-cmd-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let cwd = "";
let n = 0;
beforeEach(() => {
  cwd = join(root, `t${n++}`);
  mkdirSync(cwd);
});

const cmd = createTlsCommand({ cwd: () => cwd, now: () => Date.now(), rng: seededRng(3) });

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "", err = "";
  const code = await cmd.run(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

function openssl(...args: string[]): { ok: boolean; out: string } {
  const r = spawnSync("/usr/bin/openssl", args, { encoding: "utf8", cwd });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

const files = () => readdirSync(cwd).sort();

describe("tls ca create", () => {
  test("writes <domain>-agent-ca.pem and -key.pem and never overwrites them", async () => {
    const r = await run("ca", "create");
    expect(r).toEqual({ code: 0, out: "==> Saved consul-agent-ca.pem\n==> Saved consul-agent-ca-key.pem\n", err: "" });
    expect(files()).toEqual(["consul-agent-ca-key.pem", "consul-agent-ca.pem"]);
    expect(statSync(join(cwd, "consul-agent-ca-key.pem")).mode & 0o777).toBe(0o600);
    const before = readFileSync(join(cwd, "consul-agent-ca.pem"), "utf8");
    const again = await run("ca", "create");
    expect(again.code).toBe(1);
    expect(again.err).toBe("consul-agent-ca.pem already exists.\n");
    expect(readFileSync(join(cwd, "consul-agent-ca.pem"), "utf8")).toBe(before);
    const info = parseCertificate(before);
    expect(info.isCa).toBe(true);
    expect(info.subjectCommonName).toMatch(/^Causeway Agent CA \d+$/);
    expect(Math.round((info.notAfter.getTime() - info.notBefore.getTime()) / 86_400_000)).toBe(1825);
  });

  test("-domain, -days, -common-name and -name-constraint", async () => {
    const r = await run("ca", "create", "-domain=example", "-days", "10", "-common-name", "My CA", "-name-constraint", "-additional-name-constraint", "ui.internal");
    expect(r.code).toBe(0);
    expect(files()).toEqual(["example-agent-ca-key.pem", "example-agent-ca.pem"]);
    const text = openssl("x509", "-text", "-noout", "-in", "example-agent-ca.pem").out;
    expect(text).toContain("Subject: CN = My CA");
    expect(text).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    expect(text).toMatch(/Permitted:\s+DNS:ui.internal\s+DNS:example\s+DNS:localhost/);
    const info = parseCertificate(readFileSync(join(cwd, "example-agent-ca.pem"), "utf8"));
    expect(Math.round((info.notAfter.getTime() - info.notBefore.getTime()) / 86_400_000)).toBe(10);
  });

  test("bad flags are named", async () => {
    expect((await run("ca", "create", "-days", "0")).err).toContain("flag -days");
    expect((await run("ca", "create", "-days", "x")).err).toContain("flag -days");
    expect((await run("ca", "create", "-bogus")).err).toContain("flag provided but not defined: -bogus");
    expect(files()).toEqual([]);
  });
});

describe("tls cert create", () => {
  test("server certificates: names, SANs, numbering, openssl verify", async () => {
    await run("ca", "create");
    const r = await run("cert", "create", "-server", "-node", "n1", "-additional-dnsname", "extra.example", "-additional-ipaddress", "10.1.2.3");
    expect(r.code).toBe(0);
    expect(r.err).toBe("");
    expect(r.out).toContain("==> WARNING: Server Certificates grants authority");
    expect(r.out).toContain("==> Using consul-agent-ca.pem and consul-agent-ca-key.pem\n==> Saved dc1-server-consul-0.pem\n==> Saved dc1-server-consul-0-key.pem\n");
    expect(openssl("verify", "-CAfile", "consul-agent-ca.pem", "dc1-server-consul-0.pem").out).toContain("dc1-server-consul-0.pem: OK");
    const text = openssl("x509", "-text", "-noout", "-in", "dc1-server-consul-0.pem").out;
    expect(text).toContain("DNS:extra.example, DNS:n1.server.dc1.consul, DNS:server.dc1.consul, DNS:localhost, IP Address:10.1.2.3, IP Address:127.0.0.1");
    expect(text).toContain("Subject: CN = server.dc1.consul");
    expect(text).toContain("TLS Web Server Authentication, TLS Web Client Authentication");
    expect(statSync(join(cwd, "dc1-server-consul-0-key.pem")).mode & 0o777).toBe(0o600);
    // The next certificate takes the next free index; nothing is overwritten.
    const first = readFileSync(join(cwd, "dc1-server-consul-0.pem"), "utf8");
    expect((await run("cert", "create", "-server")).out).toContain("==> Saved dc1-server-consul-1.pem\n==> Saved dc1-server-consul-1-key.pem\n");
    expect(readFileSync(join(cwd, "dc1-server-consul-0.pem"), "utf8")).toBe(first);
    // An index is free only when both its files are missing.
    writeFileSync(join(cwd, "dc1-server-consul-2-key.pem"), "mine");
    expect((await run("cert", "create", "-server")).out).toContain("==> Saved dc1-server-consul-3.pem\n");
    expect(readFileSync(join(cwd, "dc1-server-consul-2-key.pem"), "utf8")).toBe("mine");
  });

  test("client and cli certificates; -dc and -domain pick the CA and the names", async () => {
    await run("ca", "create", "-domain", "example");
    const c = await run("cert", "create", "-client", "-dc", "east", "-domain", "example");
    expect(c.out).toBe("==> Using example-agent-ca.pem and example-agent-ca-key.pem\n==> Saved east-client-example-0.pem\n==> Saved east-client-example-0-key.pem\n");
    const cli = await run("cert", "create", "-cli", "-dc=east", "-domain=example");
    expect(cli.out).toContain("==> Saved east-cli-example-0.pem\n==> Saved east-cli-example-0-key.pem\n");
    for (const f of ["east-client-example-0.pem", "east-cli-example-0.pem"]) {
      expect(openssl("verify", "-CAfile", "example-agent-ca.pem", f).ok).toBe(true);
    }
    const client = openssl("x509", "-text", "-noout", "-in", "east-client-example-0.pem").out;
    expect(client).toContain("DNS:client.east.example, DNS:localhost, IP Address:127.0.0.1");
    const cliText = openssl("x509", "-text", "-noout", "-in", "east-cli-example-0.pem").out;
    expect(cliText).toMatch(/Subject Alternative Name: \s+DNS:cli.east.example, DNS:localhost\n/);
    expect(cliText).toContain("TLS Web Client Authentication");
    expect(cliText).not.toContain("TLS Web Server Authentication");
  });

  test("-ca and -key paths; a CA from another directory", async () => {
    await run("ca", "create");
    const caDir = cwd;
    cwd = join(root, `t${n++}`);
    mkdirSync(cwd);
    const r = await run("cert", "create", "-client", "-ca", join(caDir, "consul-agent-ca.pem"), "-key", join(caDir, "consul-agent-ca-key.pem"));
    expect(r.code).toBe(0);
    expect(files()).toEqual(["dc1-client-consul-0-key.pem", "dc1-client-consul-0.pem"]);
    expect(openssl("verify", "-CAfile", join(caDir, "consul-agent-ca.pem"), "dc1-client-consul-0.pem").ok).toBe(true);
  });

  test("exactly one of -server, -client, -cli", async () => {
    await run("ca", "create");
    for (const args of [[], ["-server", "-client"], ["-client", "-cli"], ["-server", "-client", "-cli"]]) {
      const r = await run("cert", "create", ...args);
      expect(r).toEqual({ code: 1, out: "", err: "Please provide either -server, -client, or -cli\n" });
    }
    expect(files()).toEqual(["consul-agent-ca-key.pem", "consul-agent-ca.pem"]);
  });

  test("-node requires -server", async () => {
    await run("ca", "create");
    for (const kind of ["-client", "-cli"]) {
      expect(await run("cert", "create", kind, "-node", "n1")).toEqual({ code: 1, out: "", err: "-node requires -server\n" });
    }
  });

  test("errors: missing CA, mismatched CA key, bad IP, bad days", async () => {
    const missing = await run("cert", "create", "-server");
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^Error reading CA: .*consul-agent-ca\.pem/);
    await run("ca", "create");
    await run("ca", "create", "-domain", "other");
    const mismatch = await run("cert", "create", "-client", "-key", "other-agent-ca-key.pem");
    expect(mismatch.err).toBe("other-agent-ca-key.pem is not the private key of consul-agent-ca.pem\n");
    expect((await run("cert", "create", "-client", "-additional-ipaddress", "1.2.3")).err)
      .toBe('invalid value "1.2.3" for flag -additional-ipaddress: not an IP address\n');
    expect((await run("cert", "create", "-client", "-days", "-1")).err).toContain("flag -days");
    expect((await run("cert", "create", "-client", "extra")).err).toContain('unexpected argument "extra"');
    expect(files().filter((f) => f.startsWith("dc1-"))).toEqual([]);
  });
});

describe("help", () => {
  test.each([
    [["-h"], "Usage: causeway tls <subcommand>"],
    [["--help"], "Usage: causeway tls <subcommand>"],
    [["ca", "-h"], "Usage: causeway tls ca <subcommand>"],
    [["ca", "create", "-h"], "Usage: causeway tls ca create [options]"],
    [["cert", "--help"], "Usage: causeway tls cert <subcommand>"],
    [["cert", "create", "-help"], "Usage: causeway tls cert create -server|-client|-cli"],
    [["cert", "create", "-server", "-h"], "Usage: causeway tls cert create -server|-client|-cli"],
  ])("%p prints help and exits 0", async (argv, head) => {
    const r = await run(...argv);
    expect(r.code).toBe(0);
    expect(r.out.startsWith(head)).toBe(true);
    expect(existsSync(join(cwd, "consul-agent-ca.pem"))).toBe(false);
  });

  test("no subcommand or an unknown one is a usage error", async () => {
    expect((await run()).code).toBe(1);
    const r = await run("frob");
    expect(r.code).toBe(1);
    expect(r.err).toContain('unknown subcommand "frob"');
    expect((await run("ca", "delete")).err).toContain('unknown subcommand "ca delete"');
  });

  test("the cert create help lists every flag", async () => {
    const { out } = await run("cert", "create", "-h");
    for (const f of ["-server", "-client", "-cli", "-dc=", "-domain=", "-node=", "-days=", "-additional-dnsname=", "-additional-ipaddress=", "-ca=", "-key="]) {
      expect(out).toContain(`  ${f}`);
    }
  });
});
