/**
 * POST /v1/agent/connect/authorize: Consul 1.8's Agent.ConnectAuthorize (agent/connect_auth.go) over a
 * list of intentions, with connect.ParseCertURI (agent/connect/uri.go) for the client certificate URI.
 *
 * Consul 1.8 does NOT compare the URI's trust domain with the cluster's ("Note that we DON'T explicitly
 * validate the trust-domain matches ours. See the PR for this change for details."): the TLS layer has
 * already verified the certificate chain, so any trust domain is accepted here too.
 */
import { IntentionError } from "./errors.ts";
import { decidingIntention } from "./match.ts";
import { intentionString } from "./precedence.ts";
import { INTENTION_DEFAULT_NAMESPACE, type Intention } from "./types.ts";

/** What a Connect certificate URI identifies (connect.CertURI implementations). */
export type CertUri =
  | { readonly kind: "service"; readonly host: string; readonly namespace: string; readonly datacenter: string; readonly service: string }
  | { readonly kind: "agent"; readonly host: string; readonly datacenter: string; readonly agent: string }
  | { readonly kind: "signing"; readonly clusterId: string; readonly domain: string };

const SERVICE_PATH = /^\/ns\/([^/]+)\/dc\/([^/]+)\/svc\/([^/]+)$/;
const AGENT_PATH = /^\/agent\/client\/dc\/([^/]+)\/id\/([^/]+)$/;
const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

/** Go's url.PathUnescape; undefined for a malformed escape (url.Parse fails on those). */
function unescape(s: string): string | undefined {
  if (/%(?![0-9a-fA-F]{2})/.test(s)) return undefined;
  try {
    return decodeURIComponent(s);
  } catch {
    // Escapes that are not UTF-8: Go keeps the raw bytes; for matching purposes keep the text as is.
    return s;
  }
}

/**
 * connect.ParseCertURIFromString: scheme "spiffe" (case-insensitive, as url.Parse lowercases it), then
 * `/ns/<ns>/dc/<dc>/svc/<svc>` (a service), `/agent/client/dc/<dc>/id/<id>` (an agent, Consul 1.5.2+) or
 * an empty path with a dotted host (the CA's signing ID `spiffe://<cluster-id>.<domain>`). The regexes run
 * on the escaped path and each part is then unescaped. Returns undefined when Consul would return an error
 * (bad URL, other scheme, other shape).
 */
export function parseCertUri(input: string): CertUri | undefined {
  if (/[\u0000-\u001f\u007f]/.test(input)) return undefined; // url.Parse: "invalid control character in URL"
  const scheme = SCHEME.exec(input);
  if (scheme === null || scheme[1]!.toLowerCase() !== "spiffe") return undefined;
  let rest = input.slice(scheme[0].length).replace(/#.*$/s, "").replace(/\?.*$/s, "");
  let host = "";
  if (rest.startsWith("//")) {
    const end = rest.indexOf("/", 2);
    const authority = end === -1 ? rest.slice(2) : rest.slice(2, end);
    rest = end === -1 ? "" : rest.slice(end);
    const at = authority.lastIndexOf("@");
    const rawHost = at === -1 ? authority : authority.slice(at + 1);
    const decoded = unescape(rawHost);
    if (decoded === undefined) return undefined;
    host = decoded;
  } else if (!rest.startsWith("/")) {
    // An opaque URI ("spiffe:x"): no host and an empty Path, so not any Connect identifier.
    return undefined;
  }
  if (unescape(rest) === undefined) return undefined;
  const svc = SERVICE_PATH.exec(rest);
  if (svc !== null) {
    const [ns, dc, service] = [unescape(svc[1]!)!, unescape(svc[2]!)!, unescape(svc[3]!)!];
    return { kind: "service", host, namespace: ns, datacenter: dc, service };
  }
  const agent = AGENT_PATH.exec(rest);
  if (agent !== null) return { kind: "agent", host, datacenter: unescape(agent[1]!)!, agent: unescape(agent[2]!)! };
  const dot = host.indexOf(".");
  if (rest === "" && dot > 0) return { kind: "signing", clusterId: host.slice(0, dot), domain: host.slice(dot + 1) };
  return undefined;
}

/** The body of POST /v1/agent/connect/authorize (structs.ConnectAuthorizeRequest), decoded. */
export interface AuthorizeRequest {
  /** The destination service's name (required). */
  readonly target: string;
  /** The client certificate's URI SAN, e.g. spiffe://<trust-domain>/ns/default/dc/dc1/svc/web. */
  readonly clientCertURI: string;
  /** ClientCertSerial is accepted by Consul but unused (revocation is a TODO there). */
  readonly clientCertSerial?: string;
}

/**
 * What decides when no intention matches. `true`/`false` is the ACL default policy with ACLs enabled;
 * `{ aclsEnabled: false }` is Consul 1.8's behaviour with ACLs disabled (the anonymous token resolves to
 * no authorizer): allowed, with its own reason.
 */
export type AuthorizeDefault = boolean | { readonly aclsEnabled: false };

/** The JSON response of /v1/agent/connect/authorize (connectAuthorizeResp). */
export interface AuthorizeResponse {
  readonly Authorized: boolean;
  readonly Reason: string;
}

/**
 * Authorizes a connection from the service in `clientCertURI` to `target` (in namespace "default", the
 * OSS TargetNamespace()). Throws IntentionError("bad-request") with Consul's texts: "Target service must
 * be specified", "ClientCertURI not a valid Connect identifier" (unparseable), "ClientCertURI not a valid
 * Service identifier" (an agent or signing URI). Otherwise the first matching intention by precedence
 * decides ("Matched intention: DENY default/* => default/db (ID: ..., Precedence: 8)"); with none, the
 * default ("Default behavior configured by ACLs", or "ACLs disabled, access is allowed by default").
 * The ACL check (service:write on target for the caller's token) is the caller's job.
 */
export function authorize(req: AuthorizeRequest, intentions: readonly Intention[], dflt: AuthorizeDefault): AuthorizeResponse {
  if (req.target === "") throw new IntentionError("bad-request", "Target service must be specified");
  const uri = parseCertUri(req.clientCertURI);
  if (uri === undefined) throw new IntentionError("bad-request", "ClientCertURI not a valid Connect identifier");
  if (uri.kind !== "service") throw new IntentionError("bad-request", "ClientCertURI not a valid Service identifier");
  const ixn = decidingIntention(
    intentions,
    { namespace: uri.namespace, name: uri.service },
    { namespace: INTENTION_DEFAULT_NAMESPACE, name: req.target },
  );
  if (ixn !== undefined) return { Authorized: ixn.Action === "allow", Reason: `Matched intention: ${intentionString(ixn)}` };
  if (typeof dflt !== "boolean") return { Authorized: true, Reason: "ACLs disabled, access is allowed by default" };
  return { Authorized: dflt, Reason: "Default behavior configured by ACLs" };
}
