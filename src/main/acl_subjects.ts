/**
 * What the agent's ACL checks need from a decoded registration (src/http agent_acl.ts): the services a
 * service registration writes (a sidecar registered with it is one more: `<id>-sidecar-proxy`, a
 * connect-proxy for the service) and the check a check registration writes, with the agent's defaults
 * for empty IDs.
 */
import type { CheckRegistration, ServiceRegistration } from "../agent/index.ts";

export function serviceAclSubjects(reg: ServiceRegistration): { id: string; name: string; destination?: string }[] {
  const id = reg.ID || reg.Name;
  const out: { id: string; name: string; destination?: string }[] = [
    { id, name: reg.Name, ...(reg.Kind === "connect-proxy" && reg.Proxy ? { destination: reg.Proxy.DestinationServiceName } : {}) },
  ];
  const sidecar = reg.Connect?.SidecarService;
  if (sidecar) out.push({ id: sidecar.ID || `${id}-sidecar-proxy`, name: sidecar.Name || `${reg.Name}-sidecar-proxy`, destination: reg.Name });
  return out;
}

export function checkAclSubject(reg: CheckRegistration): { checkId: string; serviceId: string } {
  return { checkId: reg.CheckID || (reg.ServiceID ? `service:${reg.ServiceID}` : reg.Name), serviceId: reg.ServiceID };
}
