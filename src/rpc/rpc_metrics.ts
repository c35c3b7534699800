/**
 * The RPC layer's metrics, with Consul's names:
 * - `rpc.request` (counter): requests this server received over the network (any service);
 *   `rpc.request_error` (counter): those that ended in an error;
 * - `rpc.query` (counter): reads this server ran for a request (a blocking read counts once here);
 *   `rpc.queries_blocking` (gauge, Consul 1.9+): blocking reads waiting on this server now;
 * - `rpc.cross-dc` (counter, label `datacenter`): requests forwarded to another datacenter.
 */
import type { Interceptor } from "@connectrpc/connect";
import { MetricsRegistry, type CounterHandle, type GaugeHandle } from "../telemetry/index.ts";

export class RpcMetrics {
  readonly request: CounterHandle;
  readonly requestError: CounterHandle;
  readonly query: CounterHandle;
  private readonly blockingGauge: GaugeHandle;
  private blocking = 0;
  private readonly crossDcByName = new Map<string, CounterHandle>();

  /** Without a registry every record is dropped. */
  constructor(private readonly registry: MetricsRegistry = new MetricsRegistry({ now: () => 0, filter: () => false })) {
    this.request = registry.counter("rpc.request");
    this.requestError = registry.counter("rpc.request_error");
    this.query = registry.counter("rpc.query");
    this.blockingGauge = registry.gauge("rpc.queries_blocking");
  }

  crossDc(datacenter: string): CounterHandle {
    let h = this.crossDcByName.get(datacenter);
    if (!h) this.crossDcByName.set(datacenter, (h = this.registry.counter("rpc.cross-dc", [["datacenter", datacenter]])));
    return h;
  }

  /** A blocking read started (+1) or ended (-1). */
  blockingQueries(delta: 1 | -1): void {
    this.blocking += delta;
    this.blockingGauge.set(this.blocking);
  }

  /** Counts every request a ConnectRPC server handles, and its errors (install on the server's router). */
  readonly interceptor: Interceptor = (next) => async (req) => {
    this.request.add();
    try {
      return await next(req);
    } catch (err) {
      this.requestError.add();
      throw err;
    }
  };
}
