/**
 * Names shared by listeners, clusters and endpoints: upstream SNIs (agent/connect/sni.go UpstreamSNI and
 * QuerySNI), exposed-path cluster names, and the finalized expose paths.
 */
import type { ExposePath, Upstream } from "../../model/index.ts";
import type { SidecarSnapshot } from "../../proxycfg/index.ts";
import { serviceSni } from "../../connect/index.ts";

/** `<name>.default.<dc>.query.<trust domain>`. */
export function querySni(name: string, datacenter: string, trustDomain: string): string {
  return `${name}.default.${datacenter}.query.${trustDomain}`;
}

/** `UpstreamSNI`: the query SNI for prepared queries, else the service SNI in `datacenter` (or the upstream's). */
export function upstreamSni(snap: SidecarSnapshot, u: Upstream, datacenter: string): string {
  const dc = u.Datacenter || datacenter;
  if (u.DestinationType === "prepared_query") return querySni(u.DestinationName, dc, snap.Roots.TrustDomain);
  return serviceSni(u.DestinationName, "", u.DestinationNamespace ?? "", dc, snap.Roots.TrustDomain);
}

/** `exposed_cluster_<port>`: the local cluster of an exposed path on another port than the app's. */
export function exposeClusterName(port: number): string {
  return `exposed_cluster_${port}`;
}

/**
 * The expose paths of the registration, protocol defaulted to "http" (ExposeConfig.Finalize), followed by
 * the paths derived from checks when `Expose.Checks` is set.
 */
export function exposedPaths(snap: SidecarSnapshot): ExposePath[] {
  const paths: ExposePath[] = (snap.Proxy.Expose.Paths ?? []).map((p) => ({ ...p, Protocol: p.Protocol || "http" }));
  if (snap.Proxy.Expose.Checks) paths.push(...snap.ConnectProxy.ExposedCheckPaths);
  return paths;
}
