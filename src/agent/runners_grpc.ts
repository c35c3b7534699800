/**
 * The gRPC check runner (Consul 1.8 agent/checks CheckGRPC and GrpcHealthProbe): calls the standard
 * health service (grpc.health.v1.Health/Check) through the injected GrpcProbe every interval.
 */
import type { GrpcProbe } from "./ports.ts";
import { DEFAULT_CHECK_TIMEOUT_MS, errorText, intervalLoop, type CheckRunner, type IntervalOptions } from "./runners.ts";

/** HealthCheckResponse.ServingStatus SERVING. */
export const GRPC_SERVING = 1;
/** Consul 1.8's checks.ErrGRPCUnhealthy: the answer for any status but SERVING. */
export const GRPC_UNHEALTHY = "gRPC application didn't report service healthy";

/** Splits Consul's `GRPC` field, "host:port[/service]", at the first "/" (strings.SplitN(target, "/", 2)). */
export function parseGrpcTarget(target: string): { server: string; service: string } {
  const slash = target.indexOf("/");
  return slash < 0 ? { server: target, service: "" } : { server: target.slice(0, slash), service: target.slice(slash + 1) };
}

/**
 * A gRPC check: passing "gRPC check <target>: success" when the server answers SERVING, critical with
 * GRPC_UNHEALTHY for another status, critical with the probe's error text otherwise (timeout 10 s by
 * default, as Consul's).
 */
export function startGrpcCheck(o: IntervalOptions & { probe: GrpcProbe; target: string; useTls: boolean; tlsSkipVerify: boolean }): CheckRunner {
  const timeoutMs = o.timeoutMs > 0 ? o.timeoutMs : DEFAULT_CHECK_TIMEOUT_MS;
  const { server, service } = parseGrpcTarget(o.target);
  return intervalLoop({ ...o, timeoutMs }, async (notify, wait) => {
    const r = await wait(o.probe({ target: server, service, useTls: o.useTls, tlsSkipVerify: o.tlsSkipVerify, timeoutMs }));
    if (r === "timeout") notify(o.checkId, "critical", "rpc error: code = DeadlineExceeded desc = context deadline exceeded");
    else if ("error" in r) notify(o.checkId, "critical", errorText(r.error));
    else if (r.value !== GRPC_SERVING) notify(o.checkId, "critical", GRPC_UNHEALTHY);
    else notify(o.checkId, "passing", `gRPC check ${o.target}: success`);
  });
}
