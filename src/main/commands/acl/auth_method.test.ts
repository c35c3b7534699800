import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { managedCli, type Run } from "./fixtures.test.ts";

const CA = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIRAJ\n-----END CERTIFICATE-----\n";
const K8S = ["-kubernetes-host", "https://k8s.example.com:6443", "-kubernetes-ca-cert", CA, "-kubernetes-service-account-jwt", "eyJhbGciOi.x.y"];
const K8S_CONFIG = `Config:\n{\n  "CACert": ${JSON.stringify(CA)},\n  "Host": "https://k8s.example.com:6443",\n  "ServiceAccountJWT": "eyJhbGciOi.x.y"\n}\n`;
const JWT_CONFIG = { JWTValidationPubKeys: ["-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n"], BoundIssuer: "https://issuer", ClaimMappings: { sub: "sub", "1": "one" } };

const fails = (err: string) => ({ code: 1, out: "", err: `${err}\n` });
/** A refusal printed with the command's help after it, as Consul's c.UI.Error(c.Help()). */
const failsWithHelp = (err: string, usage: string) => ({ code: 1, out: "", err: expect.stringMatching(new RegExp(`^${err.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\n${usage}`)) });

const k8s = async (run: Run, ...extra: string[]) => expect((await run(["auth-method", "create", "-type", "kubernetes", "-name", "k8s", ...K8S, ...extra])).code).toBe(0);

describe("causeway acl auth-method", () => {
  test("create: kubernetes from its flags, jwt from -config (text, @file, stdin); pretty and json as Consul 1.8 prints them", async () => {
    const { run } = await managedCli();
    expect(await run(["auth-method", "create", "-type", "kubernetes", "-name", "k8s", "-description", "the cluster", ...K8S])).toEqual({
      code: 0, out: `Name:          k8s\nType:          kubernetes\nDescription:   the cluster\n${K8S_CONFIG}`, err: "",
    });

    const dir = mkdtempSync(join(tmpdir(), "cw-acl-am-"));
    try {
      writeFileSync(join(dir, "jwt.json"), JSON.stringify(JWT_CONFIG));
      const cases: [string, string[], string][] = [
        ["the text", ["-config", JSON.stringify(JWT_CONFIG)], ""],
        ["@file", ["-config", `@${join(dir, "jwt.json")}`], ""],
        ["stdin", ["-config", "-"], JSON.stringify(JWT_CONFIG)],
      ];
      for (const [name, config, stdin] of cases) {
        const r = await run(["auth-method", "create", "-type", "jwt", "-name", `jwt-${name.replace(/\W/g, "")}`, "-display-name", "JWT", "-max-token-ttl", "90m", "-token-locality", "global", ...config, "-format", "json"], {}, stdin);
        expect([name, r.code, r.err]).toEqual([name, 0, ""]);
        // api.ACLAuthMethod's MarshalJSON: MaxTokenTTL first as a duration string, empty Description left out, Config's keys sorted.
        expect(r.out).toMatch(new RegExp(
          `^\\{\\n {4}"MaxTokenTTL": "1h30m0s",\\n {4}"Name": "jwt-\\w+",\\n {4}"Type": "jwt",\\n {4}"DisplayName": "JWT",\\n {4}"TokenLocality": "global",\\n` +
            ` {4}"Config": \\{\\n {8}"BoundIssuer": "https://issuer",\\n {8}"ClaimMappings": \\{\\n {12}"1": "one",\\n {12}"sub": "sub"\\n {8}\\},\\n` +
            ` {8}"JWTValidationPubKeys": \\[\\n {12}"-----BEGIN PUBLIC KEY-----\\\\nMFkw\\\\n-----END PUBLIC KEY-----\\\\n"\\n {8}\\]\\n {4}\\},\\n` +
            ` {4}"CreateIndex": \\d+,\\n {4}"ModifyIndex": \\d+\\n\\}\\n$`,
        ));
      }
      // The CA cert from a file.
      writeFileSync(join(dir, "ca.crt"), CA);
      const fromFile = await run(["auth-method", "create", "-type", "kubernetes", "-name", "k8s-file", ...K8S.slice(0, 2), "-kubernetes-ca-cert", `@${join(dir, "ca.crt")}`, ...K8S.slice(4)]);
      expect(fromFile.out).toEndWith(K8S_CONFIG);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("read and list, pretty (with -meta) and json; delete", async () => {
    const { run } = await managedCli();
    await k8s(run, "-description", "the cluster", "-max-token-ttl", "1h");
    expect((await run(["auth-method", "create", "-type", "jwt", "-name", "jwt", "-display-name", "JWT", "-config", '{"BoundIssuer":"x"}'])).code).toBe(0);

    const read = await run(["auth-method", "read", "-name", "k8s", "-meta"]);
    expect(read).toEqual({
      code: 0, err: "",
      out: expect.stringMatching(new RegExp(`^Name: {10}k8s\\nType: {10}kubernetes\\nDescription: {3}the cluster\\nMaxTokenTTL: {3}1h0m0s\\nCreate Index: {2}\\d+\\nModify Index: {2}\\d+\\n`)),
    });
    expect(read.out).toEndWith(K8S_CONFIG);
    expect(JSON.parse((await run(["auth-method", "read", "-name", "jwt", "-format", "json"])).out)).toEqual({
      Name: "jwt", Type: "jwt", DisplayName: "JWT", Config: { BoundIssuer: "x" }, CreateIndex: expect.any(Number), ModifyIndex: expect.any(Number),
    });

    // Entries back to back, then the blank line Consul's UI adds after the formatter's output.
    expect(await run(["auth-method", "list"])).toEqual({
      code: 0, out: "jwt:\n   Type:         jwt\n   DisplayName:  JWT\n   Description:  \nk8s:\n   Type:         kubernetes\n   Description:  the cluster\n\n", err: "",
    });
    expect((await run(["auth-method", "list", "-meta"])).out).toMatch(/^jwt:\n(?: {3}.*\n){3} {3}Create Index: \d+\n {3}Modify Index: \d+\nk8s:\n/);
    // api.ACLAuthMethodListEntry in 1.8 has no MaxTokenTTL, TokenLocality or Config.
    expect(JSON.parse((await run(["auth-method", "list", "-format", "json"])).out)).toEqual([
      { Name: "jwt", Type: "jwt", DisplayName: "JWT", CreateIndex: expect.any(Number), ModifyIndex: expect.any(Number) },
      { Name: "k8s", Type: "kubernetes", Description: "the cluster", CreateIndex: expect.any(Number), ModifyIndex: expect.any(Number) },
    ]);

    expect(await run(["auth-method", "delete", "-name", "jwt"])).toEqual({ code: 0, out: 'Auth method "jwt" deleted successfully\n', err: "" });
    expect(await run(["auth-method", "read", "-name", "jwt"])).toEqual(fails('Auth method not found with name "jwt"'));
    // Deleting a method that is not there succeeds, as the API answers true.
    expect((await run(["auth-method", "delete", "-name", "jwt"])).code).toBe(0);
    await run(["auth-method", "delete", "-name", "k8s"]);
    expect(await run(["auth-method", "list"])).toEqual({ code: 0, out: "", err: "" });
    expect(await run(["auth-method", "list", "-format", "json"])).toEqual({ code: 0, out: "[]\n", err: "" });
  });

  test("update merges what is given; -config replaces Config whole; -no-merge keeps only Name and Type", async () => {
    const { run } = await managedCli();
    await k8s(run, "-description", "the cluster", "-display-name", "K8S");
    const merged = await run(["auth-method", "update", "-name", "k8s", "-kubernetes-host", "https://new:6443", "-max-token-ttl", "2h", "-token-locality", "local"]);
    expect(merged).toEqual({
      code: 0, err: "",
      out: `Name:          k8s\nType:          kubernetes\nDisplayName:   K8S\nDescription:   the cluster\nMaxTokenTTL:   2h0m0s\nTokenLocality: local\n${K8S_CONFIG.replace("https://k8s.example.com:6443", "https://new:6443")}`,
    });
    const described = await run(["auth-method", "update", "-name", "k8s", "-description", "renamed", "-display-name", "", "-format", "json"]);
    expect(JSON.parse(described.out)).toMatchObject({ MaxTokenTTL: "2h0m0s", DisplayName: "K8S", Description: "renamed", Config: { Host: "https://new:6443" } });

    expect((await run(["auth-method", "create", "-type", "jwt", "-name", "jwt", "-description", "d", "-config", JSON.stringify(JWT_CONFIG)])).code).toBe(0);
    const config = await run(["auth-method", "update", "-name", "jwt", "-config", "-", "-format", "json"], {}, '{"BoundIssuer":"https://other"}');
    expect(JSON.parse(config.out)).toMatchObject({ Description: "d", Config: { BoundIssuer: "https://other" } });
    expect(JSON.parse(config.out).Config.ClaimMappings).toBeUndefined(); // no deep merge
    // Kubernetes flags are ignored for another type when merging.
    expect(JSON.parse((await run(["auth-method", "update", "-name", "jwt", "-kubernetes-host", "h", "-format", "json"])).out).Config).toEqual({ BoundIssuer: "https://other" });

    expect(await run(["auth-method", "update", "-name", "jwt", "-no-merge", "-description", "bare"])).toEqual({
      code: 0, out: "Name:          jwt\nType:          jwt\nDescription:   bare\nConfig:\nnull\n", err: "",
    });
    const k8sReplaced = await run(["auth-method", "update", "-name", "k8s", "-no-merge", ...K8S.slice(0, 4), "-kubernetes-service-account-jwt", "new-jwt"]);
    expect(k8sReplaced.out).toStartWith("Name:          k8s\nType:          kubernetes\nDescription:   \nConfig:\n");
    expect(k8sReplaced.out).toContain('"ServiceAccountJWT": "new-jwt"');
  });

  const createUsage = "Usage: causeway acl auth-method create";
  const errors: [string, string[], unknown, string?][] = [
    ["no -type", ["create", "-name", "x"], failsWithHelp("Missing required '-type' flag", createUsage)],
    ["no -name", ["create", "-type", "jwt"], failsWithHelp("Missing required '-name' flag", createUsage)],
    ["a bad -max-token-ttl", ["create", "-type", "jwt", "-name", "x", "-max-token-ttl", "soon"], failsWithHelp('invalid value "soon" for flag -max-token-ttl: parse error', createUsage)],
    ["an unknown -format", ["create", "-type", "jwt", "-name", "x", "-format", "yaml"], fails("Unknown format: yaml")],
    ["kubernetes without -kubernetes-host", ["create", "-type", "kubernetes", "-name", "x"], fails("Missing required '-kubernetes-host' flag")],
    ["kubernetes without -kubernetes-ca-cert", ["create", "-type", "kubernetes", "-name", "x", ...K8S.slice(0, 2)], fails("Missing required '-kubernetes-ca-cert' flag")],
    ["kubernetes without the JWT", ["create", "-type", "kubernetes", "-name", "x", ...K8S.slice(0, 4)], fails("Missing required '-kubernetes-service-account-jwt' flag")],
    ["an empty CA cert from stdin", ["create", "-type", "kubernetes", "-name", "x", ...K8S.slice(0, 2), "-kubernetes-ca-cert", "-", ...K8S.slice(4)], fails("Kubernetes CA Cert is empty"), ""],
    ["a CA cert file that is not there", ["create", "-type", "kubernetes", "-name", "x", ...K8S.slice(0, 2), "-kubernetes-ca-cert", "@/nonexistent/ca.crt", ...K8S.slice(4)],
      { code: 1, out: "", err: expect.stringMatching(/^Invalid '-kubernetes-ca-cert' value: Failed to read file: .*nonexistent.*\n$/) }],
    ["-config with a kubernetes flag", ["create", "-type", "jwt", "-name", "x", "-config", "{}", "-kubernetes-host", "h"], fails("Cannot use command line arguments with '-config' flags")],
    ["a -config file that is not there", ["create", "-type", "jwt", "-name", "x", "-config", "@/nonexistent/c.json"],
      { code: 1, out: "", err: expect.stringMatching(/^Error loading configuration file: Failed to read file: .*\n$/) }],
    ["truncated -config JSON", ["create", "-type", "jwt", "-name", "x", "-config", '{"a":'], fails("Error parsing JSON configuration file: unexpected end of JSON input")],
    ["-config JSON that is not JSON", ["create", "-type", "jwt", "-name", "x", "-config", "nope"], fails("Error parsing JSON configuration file: invalid character 'o' in literal null (expecting 'u')")],
    ["-config JSON with text after it", ["create", "-type", "jwt", "-name", "x", "-config", '{"a":1} x'], fails("Error parsing JSON configuration file: invalid character 'x' after top-level value")],
    ["-config JSON that is not an object", ["create", "-type", "jwt", "-name", "x", "-config", "[1]"],
      fails("Error parsing JSON configuration file: json: cannot unmarshal array into Go value of type map[string]interface {}")],
    ["a type the servers refuse", ["create", "-type", "ldap", "-name", "x"], fails("Failed to create new auth method: Unexpected response code: 400 (Invalid Auth Method: Type should be one of: [jwt kubernetes])")],
    ["a TTL the servers refuse", ["create", "-type", "jwt", "-name", "x", "-max-token-ttl", "30s"], fails("Failed to create new auth method: Unexpected response code: 400 (MaxTokenTTL 30s cannot be less than 1m0s)")],
    ["read without -name", ["read"], fails("Must specify the -name parameter")],
    ["read of an unknown method", ["read", "-name", "nope"], fails('Auth method not found with name "nope"')],
    ["delete without -name", ["delete"], fails("Must specify the -name parameter")],
    ["list with an unknown -format", ["list", "-format", "xml"], fails("Unknown format: xml")],
    ["update without -name", ["update", "-description", "x"], fails("Cannot update an auth method without specifying the -name parameter")],
    ["update of an unknown method", ["update", "-name", "nope"], fails('Auth method not found with name "nope"')],
    ["update with -config and a kubernetes flag", ["update", "-name", "k8s", "-config", "{}", "-kubernetes-host", "h"], fails("Cannot use command line arguments with '-config' flag")],
    ["update with bad -config JSON", ["update", "-name", "k8s", "-config", "{"], fails("Error parsing JSON for auth method config: unexpected end of JSON input")],
    ["update with an empty CA cert", ["update", "-name", "k8s", "-kubernetes-ca-cert", "-"], fails("Kubernetes CA Cert is empty"), ""],
    ["update -no-merge of kubernetes without its flags", ["update", "-name", "k8s", "-no-merge", "-description", "x"], fails("Missing required '-kubernetes-host' flag")],
    ["update a TTL the servers refuse", ["update", "-name", "k8s", "-max-token-ttl", "25h"], fails('Error updating auth method "k8s": Unexpected response code: 400 (MaxTokenTTL 25h0m0s cannot be more than 24h0m0s)')],
    ["an unknown flag", ["read", "-bogus"], { code: 1, out: "", err: expect.stringMatching(/^flag provided but not defined: -bogus\nUsage: causeway acl auth-method read/) }],
  ];
  test("each usage error, bad input and server refusal exits 1 with Consul's message", async () => {
    const { run } = await managedCli();
    await k8s(run);
    for (const [name, argv, want, stdin] of errors) expect([name, await run(["auth-method", ...argv], {}, stdin)]).toEqual([name, want]);
  });

  test("without a token the servers' refusal is shown", async () => {
    const { run } = await managedCli();
    expect(await run(["auth-method", "list"], { CONSUL_HTTP_TOKEN: "" })).toEqual(fails("Failed to retrieve the auth method list: Unexpected response code: 403 (Permission denied)"));
    expect(await run(["auth-method", "read", "-name", "k8s"], { CONSUL_HTTP_TOKEN: "" })).toEqual(fails('Error reading auth method "k8s": Unexpected response code: 403 (Permission denied)'));
    expect(await run(["auth-method", "delete", "-name", "k8s"], { CONSUL_HTTP_TOKEN: "" })).toEqual(fails('Error deleting auth method "k8s": Unexpected response code: 403 (Permission denied)'));
    expect(await run(["auth-method", "update", "-name", "k8s"], { CONSUL_HTTP_TOKEN: "" })).toEqual(fails("Error when retrieving current auth method: Unexpected response code: 403 (Permission denied)"));
  });
});
