/** @jsxImportSource hono/jsx */
/**
 * A service's instances (Consul's /ui/:dc/services/:name/instances): one row per instance with its
 * node, address and port, its health in words (the worst of the node's and the instance's checks, as
 * the health endpoints count them), its checks by name and status, and its tags. Pure.
 */
import type { CheckServiceNode } from "../model/index.ts";
import { Layout, type Frame } from "./layout.tsx";
import { counted, HealthCell, type Health } from "./list_parts.tsx";

/** The worst status of an instance's checks (node and service); passing when it has none. */
export function instanceHealth(x: CheckServiceNode): Health {
  if (x.Checks.some((c) => c.Status === "critical")) return "critical";
  if (x.Checks.some((c) => c.Status === "warning")) return "warning";
  return "passing";
}

/** The address a client uses: the service's own, else its node's. */
export function instanceAddress(x: CheckServiceNode): string {
  const host = x.Service.Address || x.Node.Address;
  return `${host.includes(":") ? `[${host}]` : host}:${x.Service.Port}`;
}

export function InstancesLive(props: { readonly dc: string; readonly service: string; readonly all: readonly CheckServiceNode[] }) {
  const { dc, service, all } = props;
  const counts = { passing: 0, warning: 0, critical: 0 };
  for (const x of all) counts[instanceHealth(x)]++;
  return (
    <div id="instances-live">
      <p id="live-counts">{`${counted(all.length, "instance")}: ${counts.passing} passing, ${counts.warning} warning, ${counts.critical} critical`}</p>
      <table id="instances">
        <caption>{`Instances of ${service} in ${dc}`}</caption>
        <thead><tr><th scope="col">Instance</th><th scope="col">Health</th><th scope="col">Node</th><th scope="col">Address</th><th scope="col">Checks</th><th scope="col">Tags</th></tr></thead>
        <tbody>
          {all.map((x) => (
            <tr data-instance={`${x.Node.Node}/${x.Service.ID}`}>
              <th scope="row">{x.Service.ID}</th>
              <HealthCell health={instanceHealth(x)} />
              <td>{x.Node.Node}</td>
              <td>{instanceAddress(x)}</td>
              <td><ul class="checks">{x.Checks.map((c) => <li>{`${c.Name || c.CheckID}: ${c.Status}`}</li>)}</ul></td>
              <td class="tags">{(x.Service.Tags ?? []).join(", ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {all.length === 0 ? <p>This service has no instances in {dc}.</p> : null}
    </div>
  );
}

export function InstancesPage(props: { readonly frame: Omit<Frame, "section" | "title">; readonly service: string; readonly all: readonly CheckServiceNode[]; readonly index: number }) {
  const { frame, service, all, index } = props;
  const { base, dc } = frame;
  const live = `${base}events?topic=instances&dc=${encodeURIComponent(dc)}&service=${encodeURIComponent(service)}`;
  return (
    <Layout {...frame} section="services" title={service} live={{ url: live, index }}>
      <nav aria-label="Breadcrumb"><a href={`${base}${dc}/services`}>All services</a></nav>
      <InstancesLive dc={dc} service={service} all={all} />
      <p><a href={`${base}${dc}/services/${encodeURIComponent(service)}/instances`}>Refresh</a></p>
    </Layout>
  );
}
