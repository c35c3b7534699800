/**
 * A Cluster's outlier_detection -> OutlierConfig, with Envoy's defaults (DetectorConfig in
 * source/common/upstream/outlier_detection_impl.cc).
 *
 * A failed upstream connect is Envoy's LocalOriginConnectFailed. Without
 * split_external_local_origin_errors it is mapped to a 503, which feeds both consecutive_5xx (default
 * 5, enforced 100%) and consecutive_gateway_failure (default 5, enforced 0%); with the split it feeds
 * consecutive_local_origin_failure (default 5, enforced 100%). A successful connect resets them. The
 * gateway ejects at the lowest threshold among those enforced; a threshold of 0 never fires (Envoy
 * compares `++count == threshold`); with none enforced there is no ejection and the result is undefined.
 *
 * Not implemented, so refused when asked for explicitly: enforcement percentages other than 0 and 100
 * (Envoy draws a random number), and the statistical detectors (success rate, failure percentage).
 * Envoy's success-rate detector is on by default but needs >= 5 hosts with >= 100 requests each per
 * interval; the gateway leaves it out, documented, rather than refuse the `outlier_detection: {}` every
 * Consul cluster carries.
 */
import { OutlierDetectionSchema, type OutlierDetection } from "../gen/envoy/config/cluster/v3/outlier_detection_pb.ts";
import type { OutlierConfig } from "./config_types.ts";
import { durationMs, Nack, onlyFields } from "./xds_strict.ts";

const DEFAULT_CONSECUTIVE = 5;
const DEFAULT_INTERVAL_MS = 10_000;
const DEFAULT_BASE_EJECTION_MS = 30_000;
const DEFAULT_MAX_EJECTION_PERCENT = 10;
const DEFAULT_MAX_EJECTION_MS = 300_000;

const SUPPORTED = [
  "consecutive_5xx",
  "consecutive_gateway_failure",
  "enforcing_consecutive_5xx",
  "enforcing_consecutive_gateway_failure",
  "split_external_local_origin_errors",
  "consecutive_local_origin_failure",
  "enforcing_consecutive_local_origin_failure",
  "interval",
  "base_ejection_time",
  "max_ejection_percent",
  "max_ejection_time",
  // The gateway always lets one host be ejected (Envoy 1.14's rule), which is what this asks for.
  "always_eject_one_host",
  // Accepted only as 0 (off), below.
  "enforcing_success_rate",
  "enforcing_local_origin_success_rate",
  "enforcing_failure_percentage",
  "enforcing_failure_percentage_local_origin",
];

/** The gateway's outlier settings, or undefined when `od` is absent or enforces no consecutive detector. */
export function decodeOutlier(od: OutlierDetection | undefined, path: string): OutlierConfig | undefined {
  if (!od) return undefined;
  onlyFields(OutlierDetectionSchema, od, SUPPORTED, path);
  for (const [field, value] of [
    ["enforcing_success_rate", od.enforcingSuccessRate],
    ["enforcing_local_origin_success_rate", od.enforcingLocalOriginSuccessRate],
    ["enforcing_failure_percentage", od.enforcingFailurePercentage],
    ["enforcing_failure_percentage_local_origin", od.enforcingFailurePercentageLocalOrigin],
  ] as const) {
    if (value !== undefined && value !== 0) throw new Nack(`${path}.${field}: statistical outlier detection is not supported by the built-in gateway (only 0 is accepted)`);
  }
  const detector = (threshold: number | undefined, enforcing: number | undefined, defaultEnforcing: number, name: string): number | undefined => {
    const e = enforcing ?? defaultEnforcing;
    if (e !== 0 && e !== 100) throw new Nack(`${path}.enforcing_${name}: ${e}% enforcement is not supported (only 0 or 100)`);
    const t = threshold ?? DEFAULT_CONSECUTIVE;
    return e === 100 && t > 0 ? t : undefined;
  };
  const thresholds = od.splitExternalLocalOriginErrors
    ? [detector(od.consecutiveLocalOriginFailure, od.enforcingConsecutiveLocalOriginFailure, 100, "consecutive_local_origin_failure")]
    : [
        detector(od.consecutive5xx, od.enforcingConsecutive5xx, 100, "consecutive_5xx"),
        detector(od.consecutiveGatewayFailure, od.enforcingConsecutiveGatewayFailure, 0, "consecutive_gateway_failure"),
      ];
  const enforced = thresholds.filter((t): t is number => t !== undefined);

  const intervalMs = od.interval ? durationMs(od.interval, `${path}.interval`) : DEFAULT_INTERVAL_MS;
  const baseEjectionMs = od.baseEjectionTime ? durationMs(od.baseEjectionTime, `${path}.base_ejection_time`) : DEFAULT_BASE_EJECTION_MS;
  if (intervalMs <= 0) throw new Nack(`${path}.interval: must be greater than 0`);
  if (baseEjectionMs <= 0) throw new Nack(`${path}.base_ejection_time: must be greater than 0`);
  const maxEjectionPercent = od.maxEjectionPercent ?? DEFAULT_MAX_EJECTION_PERCENT;
  if (maxEjectionPercent > 100) throw new Nack(`${path}.max_ejection_percent: must be at most 100`);
  const maxEjectionMs = od.maxEjectionTime ? durationMs(od.maxEjectionTime, `${path}.max_ejection_time`) : Math.max(DEFAULT_MAX_EJECTION_MS, baseEjectionMs);
  if (maxEjectionMs < baseEjectionMs) throw new Nack(`${path}: outlier detector's max_ejection_time cannot be smaller than base_ejection_time`);
  if (enforced.length === 0) return undefined;
  return { consecutiveFailures: Math.min(...enforced), baseEjectionMs, maxEjectionPercent, intervalMs, maxEjectionMs };
}
