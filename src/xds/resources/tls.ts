/**
 * Connect mTLS for sidecar resources (Consul agent/xds makeCommonTLSContextFromLeaf and the v3 transport
 * sockets): the proxy presents its leaf and trusts every CA root. Downstream (public listener) requires a
 * client certificate; the peer's SPIFFE identity is then authorized by RBAC (rbac.ts). Upstream clusters
 * send the target's SNI and accept only the SPIFFE IDs of the services they may reach (Consul's
 * injectSANMatcher, the fix for CVE-2021-32574).
 */
import { create } from "@bufbuild/protobuf";
import { TransportSocketSchema, type TransportSocket } from "../../gen/envoy/config/core/v3/base_pb.ts";
import {
  CommonTlsContextSchema,
  DownstreamTlsContextSchema,
  UpstreamTlsContextSchema,
  type CommonTlsContext,
} from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.ts";
import type { SidecarSnapshot } from "../../proxycfg/index.ts";
import { spiffeServiceId } from "../../connect/index.ts";
import { pack } from "./common.ts";
import { createMemo } from "./memo.ts";

/** Leaf certificate and key inline, all root certificates concatenated as the trusted CA. */
export function commonTlsContext(snap: SidecarSnapshot, matchSpiffeIds: readonly string[] = []): CommonTlsContext {
  const leaf = snap.ConnectProxy.Leaf;
  const roots = snap.Roots.Roots.map((r) => r.RootCert.endsWith("\n") ? r.RootCert : `${r.RootCert}\n`).join("");
  return create(CommonTlsContextSchema, {
    tlsParams: {},
    tlsCertificates: [
      {
        certificateChain: { specifier: { case: "inlineString", value: leaf.CertPEM } },
        privateKey: { specifier: { case: "inlineString", value: leaf.PrivateKeyPEM } },
      },
    ],
    validationContextType: {
      case: "validationContext",
      value: {
        trustedCa: { specifier: { case: "inlineString", value: roots } },
        matchSubjectAltNames: [...matchSpiffeIds].sort().map((id) => ({ matchPattern: { case: "exact" as const, value: id } })),
      },
    },
  });
}

/** The public listener's TLS: the proxy's leaf, client certificates required and verified against the roots. */
export function downstreamTlsSocket(snap: SidecarSnapshot): TransportSocket {
  return tlsSockets.get([snap.ConnectProxy.Leaf, snap.Roots.Roots], "", () => create(TransportSocketSchema, {
    name: "tls",
    configType: {
      case: "typedConfig",
      value: pack(DownstreamTlsContextSchema, { commonTlsContext: commonTlsContext(snap), requireClientCertificate: true }),
    },
  }));
}

/** An upstream cluster's TLS: the leaf as client certificate, `sni`, and the allowed server SPIFFE IDs. */
export function upstreamTlsSocket(snap: SidecarSnapshot, sni: string, spiffeIds: readonly string[]): TransportSocket {
  const key = JSON.stringify([sni, ...spiffeIds]);
  return tlsSockets.get([snap.ConnectProxy.Leaf, snap.Roots.Roots], key, () => create(TransportSocketSchema, {
    name: "tls",
    configType: {
      case: "typedConfig",
      value: pack(UpstreamTlsContextSchema, { commonTlsContext: commonTlsContext(snap, spiffeIds), sni }),
    },
  }));
}

/**
 * Transport sockets by leaf and root list (the agent cache's objects) and, upstream, SNI and SPIFFE IDs
 * (key "" is the downstream socket): packing the certificates is costly and the same for every resource
 * of the proxies of one service. Shared: never mutate a returned socket.
 */
const tlsSockets = createMemo<TransportSocket>();

/** The SPIFFE ID a target service's certificates carry. */
export function serviceSpiffeId(snap: SidecarSnapshot, service: string, namespace: string, datacenter: string): string {
  return spiffeServiceId({ trustDomain: snap.Roots.TrustDomain, namespace, datacenter, service });
}
