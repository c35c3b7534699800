/**
 * go-sockaddr templates (hashicorp/go-sockaddr/template), as Consul evaluates them in its address
 * settings: `{{ GetPrivateIP }}`, `{{ GetInterfaceIP "eth0" }}`, `{{ GetAllInterfaces | include "name"
 * "^eth" | attr "address" }}`. Pure: the host's interfaces and default route come in as a SockaddrHost.
 */
export { emptyTemplateHint, evaluateSockaddrTemplate, SockaddrTemplateError } from "./template.ts";
export type { HostInterface, InterfaceFlag, SockaddrHost } from "./host.ts";
