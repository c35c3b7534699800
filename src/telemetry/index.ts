/** Metrics: the registry (counters, gauges, samples with labels) and its exposition formats. No I/O. */
export {
  goTimeString, MetricsRegistry, type CounterHandle, type GaugeHandle, type Labels, type MetricKind, type MetricsSummary, type RegistryOptions,
  type SampledValue, type SampleHandle,
} from "./registry.ts";
export { PROMETHEUS_TEXT_TYPE, prometheusName, prometheusText } from "./prometheus.ts";
