import { describe, expect, test } from "bun:test";
import type { CAConfiguration, CARoot, IssuedCert } from "../connect/index.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo, HttpApiDeps } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;
const root = (id: string, active: boolean, intermediates: string[] = []): CARoot => ({
  ID: id, Name: "Consul CA Root Cert", SerialNumber: 7, SigningKeyID: `k-${id}`, ExternalTrustDomain: "c1", NotBefore: "2024-01-01T00:00:00Z",
  NotAfter: "2034-01-01T00:00:00Z", RootCert: `pem-${id}`, IntermediateCerts: intermediates, Active: active, PrivateKeyType: "ec",
  PrivateKeyBits: 256, CreateIndex: 3, ModifyIndex: 9,
});
const leaf: IssuedCert = {
  SerialNumber: "01", CertPEM: "leaf", PrivateKeyPEM: "key", Service: "web", ServiceURI: "spiffe://c1.consul/ns/default/dc/dc1/svc/web",
  ValidAfter: "2024-01-01T00:00:00Z", ValidBefore: "2024-01-04T00:00:00Z", CreateIndex: 12, ModifyIndex: 12,
};

function setup(extra: Partial<HttpApiDeps> = {}) {
  const state = fakeState();
  const configs: [CAConfiguration, string | undefined][] = [];
  const leafCalls: [string, number, number][] = [];
  const app = createHttpApi({
    agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0,
    connectCa: {
      async setConfiguration(config, dc) {
        configs.push([config, dc]);
      },
      async leaf(service, o) {
        leafCalls.push([service, o.minIndex, o.maxWaitMs]);
        return { cert: { ...leaf, Service: service }, index: 12 };
      },
    },
    ...extra,
  });
  return { state, app, configs, leafCalls };
}

describe("GET /v1/connect/ca/roots and /v1/agent/connect/ca/roots", () => {
  for (const path of ["/v1/connect/ca/roots", "/v1/agent/connect/ca/roots"]) {
    test(`${path}: IndexedCARoots, IntermediateCerts null when empty, blocking options passed on`, async () => {
      const { app, state } = setup();
      state.values["ca-roots"] = { roots: [root("a", false), root("b", true, ["xc"])], trustDomain: "c1.consul", activeRootId: "b" };
      const res = await app.request(`${path}?index=5&wait=1s`);
      expect(res.status).toBe(200);
      expect(res.headers.get("X-Consul-Index")).toBe("42");
      const body = await res.json();
      expect(body.ActiveRootID).toBe("b");
      expect(body.TrustDomain).toBe("c1.consul");
      expect(body.Roots.map((r: CARoot) => [r.ID, r.Active, r.IntermediateCerts])).toEqual([["a", false, null], ["b", true, ["xc"]]]);
      expect(JSON.stringify(body)).not.toContain("PrivateKey\"");
      expect(state.reads[0]).toMatchObject({ query: { type: "ca-roots" }, options: { minIndex: 5, maxWaitMs: 1000 } });
    });
  }
});

describe("/v1/connect/ca/configuration", () => {
  test("GET answers the config without the private key, and without a secondary's intermediate", async () => {
    const { app, state } = setup();
    state.values["ca-config"] = {
      ClusterID: "c1", Provider: "consul", CreateIndex: 1, ModifyIndex: 2,
      Config: { LeafCertTTL: "72h", RotationPeriod: "2160h", IntermediateCertTTL: "8760h", PrivateKey: "secret", IntermediateCert: "intermediate-pem" },
    };
    const body = await (await app.request("/v1/connect/ca/configuration")).json();
    expect(body.Config).toEqual({ LeafCertTTL: "72h", RotationPeriod: "2160h", IntermediateCertTTL: "8760h" });
    expect(body.ClusterID).toBe("c1");
  });

  test("PUT passes a decoded config with defaults on; ?dc is forwarded", async () => {
    const { app, configs } = setup();
    const res = await app.request("/v1/connect/ca/configuration?dc=dc2", {
      method: "PUT", body: JSON.stringify({ Provider: "consul", Config: { LeafCertTTL: "24h", PrivateKey: "k", RootCert: "c" } }),
    });
    expect(res.status).toBe(200);
    expect(configs).toEqual([[{
      ClusterID: "", Provider: "consul", CreateIndex: 0, ModifyIndex: 0,
      Config: { LeafCertTTL: "24h", RotationPeriod: "2160h", IntermediateCertTTL: "8760h", PrivateKey: "k", RootCert: "c" },
    }, "dc2"]]);
  });

  test("PUT answers 400 for bad bodies, durations and TTLs, 500 for a refusal", async () => {
    const { app, configs } = setup();
    const put = (body: string) => app.request("/v1/connect/ca/configuration", { method: "PUT", body });
    for (const [body, msg] of [
      ["{", "Request decode failed"],
      ["[]", "Request decode failed"],
      [`{"Provider":"vault"}`, "Unsupported CA provider"],
      [`{"Provider":"consul","Config":{"LeafCertTTL":"soon"}}`, "invalid duration"],
      [`{"Provider":"consul","Config":{"RotationPeriod":5}}`, "error parsing CA config"],
      [`{"Provider":"consul","Config":{"LeafCertTTL":"30m"}}`, "error configuring provider: leaf cert TTL must be greater than 1h"],
      [`{"Provider":"consul","Config":{"LeafCertTTL":"9000h"}}`, "error configuring provider: leaf cert TTL must be less than 1 year"],
    ] as const) {
      const res = await put(body);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain(msg);
    }
    expect(configs).toHaveLength(0);
    const refusing = setup({ connectCa: { setConfiguration: () => Promise.reject(new Error("RootCert does not match PrivateKey")), leaf: () => Promise.reject(new Error("x")) } });
    const res = await refusing.app.request("/v1/connect/ca/configuration", { method: "PUT", body: `{"Provider":"consul"}` });
    expect(res.status).toBe(500);
    expect(await res.text()).toContain("RootCert does not match PrivateKey");
  });
});

describe("PUT /v1/connect/ca/configuration: nothing is silently defaulted or ignored", () => {
  const put = (app: ReturnType<typeof setup>["app"], body: string) => app.request("/v1/connect/ca/configuration", { method: "PUT", body });

  test.each([
    ["", "Request decode failed: EOF"],
    ["   ", "Request decode failed: EOF"],
    ["null", "Request decode failed: body must be a JSON object"],
    ["{}", `Missing CA provider: the body must set Provider (only "consul" is available)`],
    [`{"Config":{"LeafCertTTL":"72h"}}`, `Missing CA provider: the body must set Provider (only "consul" is available)`],
    [`{"Provider":""}`, `Missing CA provider: the body must set Provider (only "consul" is available)`],
  ])("%j is 400 %j and applies nothing", async (body: string, message: string) => {
    const { app, configs } = setup();
    const res = await put(app, body);
    expect([res.status, await res.text()]).toEqual([400, `${message}\n`]);
    expect(configs).toEqual([]);
  });

  // Consul 1.8's CommonCAProviderConfig.Validate, after its defaults (ec, 256) for absent or null fields.
  const EC_BITS = "error configuring provider: ECDSA key length must be one of (224, 256, 384, 521) bits";
  const RSA_BITS = "error configuring provider: RSA key length must be 2048 or 4096 bits";
  const KEY_TYPE = "error configuring provider: private key type must be either 'ecdsa' or 'rsa'";
  test.each([
    [{ PrivateKeyType: "rsa" }, RSA_BITS],
    [{ PrivateKeyType: "rsa", PrivateKeyBits: 3072 }, RSA_BITS],
    [{ PrivateKeyType: "rsa", PrivateKeyBits: 1024 }, RSA_BITS],
    [{ PrivateKeyType: "ec", PrivateKeyBits: 300 }, EC_BITS],
    [{ PrivateKeyBits: 4096 }, EC_BITS],
    [{ PrivateKeyBits: 0 }, EC_BITS],
    [{ PrivateKeyBits: "" }, EC_BITS],
    [{ PrivateKeyType: "" }, KEY_TYPE],
    [{ privatekeytype: "RSA" }, KEY_TYPE],
    [{ PrivateKeyType: "dsa", PrivateKeyBits: 2048 }, KEY_TYPE],
    [{ PrivateKeyType: "ec", PrivateKeyBits: 224 }, "error configuring provider: ECDSA P-224 keys are not supported by this CA (WebCrypto has no P-224 curve): PrivateKeyBits must be 256, 384 or 521"],
    [{ PrivateKeyBits: "lots" }, "Request decode failed: Config.PrivateKeyBits must be an integer"],
    [{ PrivateKeyBits: 256.5 }, "Request decode failed: Config.PrivateKeyBits must be an integer"],
    [{ PrivateKeyType: 1 }, "Request decode failed: Config.PrivateKeyType must be a string"],
    [{ LeafCertTTL: "30m", PrivateKeyType: "rsa" }, "error configuring provider: leaf cert TTL must be greater than 1h"],
  ])("key settings %j are refused with Consul's text", async (config: object, message: string) => {
    const { app, configs } = setup();
    const res = await put(app, JSON.stringify({ Provider: "consul", Config: config }));
    expect([res.status, await res.text()]).toEqual([400, `${message}\n`]);
    expect(configs).toEqual([]);
  });

  test.each([
    [{}, {}],
    [{ PrivateKeyType: null, PrivateKeyBits: null }, {}],
    [{ PrivateKeyType: "ec" }, { PrivateKeyType: "ec" }],
    [{ PrivateKeyBits: "384" }, { PrivateKeyBits: 384 }],
    [{ PrivateKeyType: "ec", PrivateKeyBits: 521 }, { PrivateKeyType: "ec", PrivateKeyBits: 521 }],
    [{ privateKeyType: "rsa", privateKeyBits: 2048 }, { PrivateKeyType: "rsa", PrivateKeyBits: 2048 }],
    [{ PrivateKeyType: "rsa", PrivateKeyBits: 4096 }, { PrivateKeyType: "rsa", PrivateKeyBits: 4096 }],
  ])("key settings %j are accepted and passed on as %j", async (config: object, passed: object) => {
    const { app, configs } = setup();
    expect((await put(app, JSON.stringify({ Provider: "consul", Config: config }))).status).toBe(200);
    expect(configs).toHaveLength(1);
    const c = configs[0]![0].Config;
    expect({ PrivateKeyType: c.PrivateKeyType, PrivateKeyBits: c.PrivateKeyBits }).toEqual({ PrivateKeyType: undefined, PrivateKeyBits: undefined, ...passed });
  });

  test("the CA's refusal of the configuration itself is 400; other failures 500", async () => {
    const message = "error configuring provider: must provide a private key when providing a root cert";
    const refusing = setup({ connectCa: { setConfiguration: () => Promise.reject(new Error(message)), leaf: () => Promise.reject(new Error("x")) } });
    const res = await put(refusing.app, `{"Provider":"consul","Config":{"RootCert":"x"}}`);
    expect([res.status, await res.text()]).toEqual([400, `${message}\n`]);
  });
});

describe("GET /v1/agent/connect/ca/leaf/:service", () => {
  test("answers the cached leaf with X-Consul-Index; ?index blocks through the cache", async () => {
    const { app, leafCalls } = setup();
    const res = await app.request("/v1/agent/connect/ca/leaf/web?index=11&wait=2s");
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Consul-Index")).toBe("12");
    expect(await res.json()).toEqual({ ...leaf, Service: "web" });
    expect(leafCalls).toEqual([["web", 11, 2000]]);
  });

  test("a failure answers 500 with its message; other methods 405; no CA 500", async () => {
    const failing = setup({ connectCa: { setConfiguration: async () => {}, leaf: () => Promise.reject(new Error("No cluster leader")) } });
    const res = await failing.app.request("/v1/agent/connect/ca/leaf/web");
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("No cluster leader\n");
    expect((await failing.app.request("/v1/agent/connect/ca/leaf/web", { method: "PUT" })).status).toBe(405);
    // A name longer than any service's is refused before a leaf is made (leaves are cached per name).
    const long = await failing.app.request(`/v1/agent/connect/ca/leaf/${"x".repeat(513)}`);
    expect([long.status, await long.text()]).toEqual([400, "Service name is too long (limit: 512 bytes)\n"]);
    const none = setup({ connectCa: undefined });
    expect((await none.app.request("/v1/agent/connect/ca/leaf/web")).status).toBe(500);
  });
});
