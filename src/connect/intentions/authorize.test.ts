/** /v1/agent/connect/authorize: Consul 1.8's reasons, and the URIs ParseCertURI accepts. */
import { describe, expect, test } from "bun:test";
import { authorize, IntentionError, parseCertUri, prepareIntentionCreate, type Intention } from "./index.ts";

const TD = "11111111-2222-3333-4444-555555555555.consul";
const uri = (svc: string, ns = "default", td = TD) => `spiffe://${td}/ns/${ns}/dc/dc1/svc/${svc}`;

function ixn(id: string, src: string, dst: string, action: string): Intention {
  const [SourceNS, SourceName] = src.split("/");
  const [DestinationNS, DestinationName] = dst.split("/");
  return prepareIntentionCreate({ SourceNS, SourceName, DestinationNS, DestinationName, Action: action }, id, { nowMs: 0 });
}

const INTENTIONS = [
  ixn("id-deny-all", "default/*", "default/db", "deny"),
  ixn("id-allow-web", "default/web", "default/db", "allow"),
  ixn("id-deny-any", "*/*", "*/*", "deny"),
];

describe("authorize", () => {
  const ROWS: readonly (readonly [string, readonly Intention[], string, string, Parameters<typeof authorize>[2], boolean, string])[] = [
    ["exact allow", INTENTIONS, "db", uri("web"), false, true,
      "Matched intention: ALLOW default/web => default/db (ID: id-allow-web, Precedence: 9)"],
    ["wildcard source deny", INTENTIONS, "db", uri("api"), true, false,
      "Matched intention: DENY default/* => default/db (ID: id-deny-all, Precedence: 8)"],
    ["full wildcard deny for another target", INTENTIONS, "cache", uri("web"), true, false,
      "Matched intention: DENY */* => */* (ID: id-deny-any, Precedence: 1)"],
    ["no match, ACL default allow", [], "db", uri("web"), true, true, "Default behavior configured by ACLs"],
    ["no match, ACL default deny", [], "db", uri("web"), false, false, "Default behavior configured by ACLs"],
    ["no match, ACLs disabled", [], "db", uri("web"), { aclsEnabled: false }, true, "ACLs disabled, access is allowed by default"],
    ["the URI's namespace is the source namespace", INTENTIONS.slice(0, 2), "db", uri("web", "other"), true, true,
      "Default behavior configured by ACLs"],
    ["any trust domain is accepted (Consul 1.8 does not compare it)", INTENTIONS, "db", uri("web", "default", "other.consul"), false, true,
      "Matched intention: ALLOW default/web => default/db (ID: id-allow-web, Precedence: 9)"],
    ["target matched case-insensitively", INTENTIONS.slice(0, 2), "DB", uri("web"), false, true,
      "Matched intention: ALLOW default/web => default/db (ID: id-allow-web, Precedence: 9)"],
    ["percent-escaped service name", [ixn("id-x", "default/my svc", "default/db", "allow")], "db", uri("my%20svc"), false, true,
      "Matched intention: ALLOW default/my svc => default/db (ID: id-x, Precedence: 9)"],
  ];

  test.each(ROWS)("%s", (_, intentions, target, clientCertURI, dflt, Authorized, Reason) => {
    expect(authorize({ target, clientCertURI }, intentions, dflt)).toEqual({ Authorized, Reason });
  });

  const BAD: readonly (readonly [string, string, string])[] = [
    ["", uri("web"), "Target service must be specified"],
    ["db", "", "ClientCertURI not a valid Connect identifier"],
    ["db", "not a uri", "ClientCertURI not a valid Connect identifier"],
    ["db", `https://${TD}/ns/default/dc/dc1/svc/web`, "ClientCertURI not a valid Connect identifier"],
    ["db", `spiffe://${TD}/ns/default/dc/dc1/svc/web/extra`, "ClientCertURI not a valid Connect identifier"],
    ["db", `spiffe://${TD}/ns/default/dc/dc1/svc/`, "ClientCertURI not a valid Connect identifier"],
    ["db", `spiffe://${TD}/ns/default/dc/dc1/svc/we%zzb`, "ClientCertURI not a valid Connect identifier"],
    ["db", `spiffe://${TD}`, "ClientCertURI not a valid Service identifier"],
    ["db", `spiffe://${TD}/agent/client/dc/dc1/id/node-1`, "ClientCertURI not a valid Service identifier"],
  ];

  test.each(BAD)("target %j, URI %j -> %s", (target, clientCertURI, message) => {
    try {
      authorize({ target, clientCertURI }, INTENTIONS, true);
    } catch (e) {
      expect(e).toBeInstanceOf(IntentionError);
      expect([(e as IntentionError).code, (e as IntentionError).message]).toEqual(["bad-request", message]);
      return;
    }
    throw new Error("expected a rejection");
  });
});

describe("parseCertUri", () => {
  test("a service URI", () => {
    expect(parseCertUri(uri("web"))).toEqual({ kind: "service", host: TD, namespace: "default", datacenter: "dc1", service: "web" });
  });

  test("the scheme is case-insensitive; query and fragment are ignored", () => {
    expect(parseCertUri(`SPIFFE://${TD}/ns/default/dc/dc1/svc/web?x=1#f`)).toMatchObject({ kind: "service", service: "web" });
  });

  test("escaped parts are unescaped after matching, so %2F is not a separator", () => {
    expect(parseCertUri(`spiffe://${TD}/ns/default/dc/dc1/svc/a%2Fb`)).toMatchObject({ service: "a/b" });
  });

  test("a signing ID and an agent ID", () => {
    expect(parseCertUri(`spiffe://${TD}`)).toEqual({ kind: "signing", clusterId: "11111111-2222-3333-4444-555555555555", domain: "consul" });
    expect(parseCertUri(`spiffe://${TD}/agent/client/dc/dc1/id/n1`)).toEqual({ kind: "agent", host: TD, datacenter: "dc1", agent: "n1" });
  });

  test.each(["spiffe:opaque", "spiffe://nodots", "spiffe://a.b/ns/x", "spiffe://a.b/ns/d\u0001/dc/x/svc/y", "1spiffe://a.b"])(
    "%j is not a Connect identifier",
    (input) => {
      expect(parseCertUri(input)).toBeUndefined();
    },
  );
});
