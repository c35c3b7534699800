/**
 * The ADS server's metrics (Consul 1.10+ names where it has them):
 * - `xds.server.streams` (gauge, label `variant`: sotw or delta): streams open;
 * - `xds.server.responses` (counter, label `type`: the resource type's short name, e.g. Cluster):
 *   discovery responses sent; `xds.server.acks` and `xds.server.nacks` (counters, same label): what
 *   the proxies answered; `xds.server.refused` (counter): streams refused (unknown node, too many);
 * - `xds.server.push_latency` (ms): from a configuration change reaching a stream (its new snapshot)
 *   to the stream's responses for it being handed to the transport, the update limiter's wait included.
 * Handles are made once per variant and type; recording allocates nothing.
 */
import { MetricsRegistry, type CounterHandle, type GaugeHandle, type SampleHandle } from "../telemetry/index.ts";

export class XdsMetrics {
  private readonly streams: Record<"sotw" | "delta", GaugeHandle>;
  private readonly open = { sotw: 0, delta: 0 };
  private readonly byType = new Map<string, { responses: CounterHandle; acks: CounterHandle; nacks: CounterHandle }>();
  readonly refused: CounterHandle;
  readonly pushLatency: SampleHandle;

  /** Without a registry every record is dropped. */
  constructor(private readonly registry: MetricsRegistry = new MetricsRegistry({ now: () => 0, filter: () => false })) {
    this.streams = { sotw: registry.gauge("xds.server.streams", [["variant", "sotw"]]), delta: registry.gauge("xds.server.streams", [["variant", "delta"]]) };
    this.refused = registry.counter("xds.server.refused");
    this.pushLatency = registry.sample("xds.server.push_latency");
  }

  /** A stream of `variant` opened (+1) or ended (-1). */
  streamsChanged(variant: "sotw" | "delta", delta: 1 | -1): void {
    this.open[variant] += delta;
    this.streams[variant].set(this.open[variant]);
  }

  /** The counters of resource type `typeUrl` (`type.googleapis.com/envoy.config.cluster.v3.Cluster` -> label Cluster). */
  of(typeUrl: string): { readonly responses: CounterHandle; readonly acks: CounterHandle; readonly nacks: CounterHandle } {
    let h = this.byType.get(typeUrl);
    if (!h) {
      const labels = [["type", typeUrl.slice(typeUrl.lastIndexOf(".") + 1)]] as const;
      h = { responses: this.registry.counter("xds.server.responses", labels), acks: this.registry.counter("xds.server.acks", labels), nacks: this.registry.counter("xds.server.nacks", labels) };
      this.byType.set(typeUrl, h);
    }
    return h;
  }
}
