/**
 * Intention queries (Consul 1.8): GET /v1/connect/intentions/match?by=source|destination&name=... (one
 * list per name, highest precedence first), GET /v1/connect/intentions/check?source=&destination=
 * [&source-type=] ({"Allowed"}), and the agent's POST /v1/agent/connect/authorize
 * ({"Authorized","Reason"}), each over a read of every intention.
 *
 * Default decision when no intention matches: with ACLs off /check allows (Consul's Intention.Check with
 * ACLs disabled: the anonymous token resolves to no authorizer) and authorize answers "ACLs disabled,
 * access is allowed by default"; with ACLs on both take the ACL default policy (deps.intentionDefaultAllow),
 * and authorize needs service:write on its target with the request's token (403 "Permission denied").
 *
 * Consul 1.8 answers the ?by= / ?name= / ?source= / ?destination= refusals, and Intention.Check's (an
 * unsupported source type), with 500 (plain fmt.Errorf); Causeway answers 400 with the same text, as for
 * every other bad parameter. Other failures go through errorResponse.
 */
import type { Context, Hono } from "hono";
import {
  authorize,
  checkIntention,
  IntentionError,
  parseIntentionMatchEntry,
  matchIntentions,
  type Intention,
  type IntentionMatchEntry,
  type IntentionMatchType,
} from "../connect/index.ts";
import { decodeGoStruct, GoError, parseGoJson, setOwn, struct } from "../lib/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { readBodyText } from "./body.ts";
import { serveRead, STATE_UNAVAILABLE } from "./read_route.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { requestAuthorizer } from "./acl_agent_rules.ts";
import { queryAll, requestToken } from "./request.ts";

/** Causeway has no ACLs: intentions decide, and with none matching the connection is allowed. */
const CHECK_DEFAULT_ALLOW = true;
const AUTHORIZE_DEFAULT = { aclsEnabled: false } as const;

const AUTHORIZE_REQUEST = struct("structs.ConnectAuthorizeRequest", { Target: "string", ClientCertURI: "string", ClientCertSerial: "string" }).struct;

/** parseIntentionMatchEntry with the agent's wrapping ("name \"a/b/c\" is invalid: ..."); a 400 Response on failure. */
function matchEntry(c: Context, what: string, value: string): IntentionMatchEntry | Response {
  try {
    return parseIntentionMatchEntry(value);
  } catch (err) {
    if (err instanceof IntentionError) return textError(c, 400, `${what} ${JSON.stringify(value)} is invalid: ${err.message}`);
    throw err;
  }
}

/** The single value of a required parameter (Go's `!ok || len(v) != 1`), or the 400 Consul's text names. */
function required(c: Context, name: string): string | Response {
  const values = queryAll(c, name);
  return values.length === 1 ? values[0]! : textError(c, 400, `required query parameter '${name}' not set`);
}

/** Go's encoding/json writes map keys sorted: the match response keyed by name, in byte order. */
function byName(names: readonly string[], matches: readonly Intention[][]): Record<string, Intention[] | null> {
  const out = new Map<string, Intention[] | null>();
  names.forEach((n, i) => out.set(n, matches[i]!.length > 0 ? matches[i]! : null));
  const body: Record<string, Intention[] | null> = {};
  for (const n of [...out.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    setOwn(body, n, out.get(n));
  }
  return body;
}

export function mountIntentionQueries(app: Hono, deps: HttpApiDeps): void {
  app.get("/v1/connect/intentions/match", (c) => {
    let type: IntentionMatchType = "destination";
    let names: string[] = [];
    const entries: IntentionMatchEntry[] = [];
    return serveRead(c, deps, () => {
      const by = required(c, "by");
      if (by instanceof Response) return by;
      if (by !== "source" && by !== "destination") return textError(c, 400, "'by' parameter must be one of 'source' or 'destination'");
      type = by;
      names = queryAll(c, "name");
      if (names.length === 0) return textError(c, 400, "required query parameter 'name' not set");
      for (const n of names) {
        const entry = matchEntry(c, "name", n);
        if (entry instanceof Response) return entry;
        entries.push(entry);
      }
      return { type: "intention-list" };
    }, (intentions) => jsonResponse(c, byName(names, matchIntentions(intentions, { type, entries }))));
  });

  app.get("/v1/connect/intentions/check", (c) => {
    let request: Parameters<typeof checkIntention>[1] | undefined;
    return serveRead(c, deps, () => {
      const sourceType = queryAll(c, "source-type")[0] || "consul";
      const source = required(c, "source");
      if (source instanceof Response) return source;
      const destination = required(c, "destination");
      if (destination instanceof Response) return destination;
      // Only a "consul" source is a namespace/name pair; any other type is refused by the check itself.
      const src = sourceType === "consul" ? matchEntry(c, "source", source) : { namespace: "", name: source };
      if (src instanceof Response) return src;
      const dst = matchEntry(c, "destination", destination);
      if (dst instanceof Response) return dst;
      request = { source: src, destination: dst, sourceType };
      return { type: "intention-list" };
    }, (intentions) => {
      try {
        return jsonResponse(c, checkIntention(intentions, request!, deps.intentionDefaultAllow ?? CHECK_DEFAULT_ALLOW));
      } catch (err) {
        return err instanceof IntentionError ? textError(c, 400, err.message) : errorResponse(c, err);
      }
    });
  });
  for (const path of ["/v1/connect/intentions/match", "/v1/connect/intentions/check"]) {
    app.all(path, (c) => textError(c, 405, `method ${c.req.method} not allowed`));
  }

  // Agent.ConnectAuthorize: no X-Consul-* headers (Consul answers from its agent cache).
  app.post("/v1/agent/connect/authorize", async (c) => {
    let req: { Target?: string; ClientCertURI?: string; ClientCertSerial?: string };
    try {
      req = decodeGoStruct(parseGoJson(await readBodyText(c)), AUTHORIZE_REQUEST);
    } catch (err) {
      if (err instanceof GoError) return textError(c, 400, `Request decode failed: ${err.message}`);
      return errorResponse(c, err);
    }
    if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
    const a = await requestAuthorizer(c, deps);
    if (a instanceof Response) return a;
    if (a && a.check("service", "write", req.Target ?? "") !== "allow") return textError(c, 403, "Permission denied");
    let intentions: readonly Intention[];
    try {
      // Read with the request's token, as Consul's agent matches intentions through its cache with it.
      const token = requestToken(c);
      intentions = (await deps.state.read({ type: "intention-list" }, { datacenter: undefined, consistency: "default", minIndex: 0, maxWaitMs: 0, ...(token !== undefined ? { token } : {}) })).value;
    } catch (err) {
      return errorResponse(c, err);
    }
    try {
      const target = req.Target ?? "";
      const clientCertURI = req.ClientCertURI ?? "";
      return jsonResponse(c, authorize({ target, clientCertURI, clientCertSerial: req.ClientCertSerial ?? "" }, intentions, deps.intentionDefaultAllow ?? AUTHORIZE_DEFAULT));
    } catch (err) {
      return err instanceof IntentionError ? textError(c, 400, err.message) : errorResponse(c, err);
    }
  });
}
