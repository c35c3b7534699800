/** Metrics: the registry (counters, gauges, samples with labels) and its exposition formats. No I/O. */
export {
  goTimeString, MetricsRegistry, type CounterHandle, type GaugeHandle, type Labels, type MetricKind, type MetricsSummary, type RegistryOptions,
  type SampledValue, type SampleHandle,
} from "./registry.ts";
export { OPENMETRICS_TEXT_TYPE, openMetricsText, PROMETHEUS_TEXT_TYPE, prometheusName, prometheusText, wantsOpenMetrics } from "./prometheus.ts";
export { compilePrefixFilter, type MetricFilter } from "./filter.ts";
