/**
 * The gateway's statistics, named as Envoy names them so dashboards and habits carry over: counters and
 * gauges under a scope (`listener.<address>.`, `tcp.<stat_prefix>.`, `cluster.<name>.`, or none), shown
 * by the admin endpoint in Envoy's text form (`name: value`, sorted) and in Prometheus form (Envoy's
 * tag extraction: `envoy_cluster_upstream_cx_total{envoy_cluster_name="..."}`).
 */

/** Where a stat lives: its text prefix and the Prometheus label that carries the scope's name. */
export type StatScope =
  | { readonly kind: "listener"; readonly name: string }
  | { readonly kind: "tcp"; readonly name: string }
  | { readonly kind: "cluster"; readonly name: string }
  | { readonly kind: "server" };

const LABEL: Record<StatScope["kind"], string> = {
  listener: "envoy_listener_address",
  tcp: "envoy_tcp_prefix",
  cluster: "envoy_cluster_name",
  server: "",
};

interface Stat {
  readonly scope: StatScope;
  readonly name: string;
  readonly type: "counter" | "gauge";
  value: number;
  handle?: StatHandle;
}

/** A counter or gauge handle; cheap to keep and bump on the hot path. */
export interface StatHandle {
  add(n?: number): void;
  /** Gauges only. */
  sub(n?: number): void;
  readonly value: number;
}

export class GatewayStats {
  private readonly stats = new Map<string, Stat>();
  private readonly collectors: (() => void)[] = [];

  /** `fn` runs before every rendering, to copy values kept elsewhere (balancer counters) into stats. */
  collect(fn: () => void): void {
    this.collectors.push(fn);
  }

  /** Sets a gauge (or a counter kept elsewhere) to `value`. */
  set(scope: StatScope, name: string, value: number, type: "counter" | "gauge" = "gauge"): void {
    const h = this.handle(scope, name, type);
    h.add(value - h.value);
  }

  /** The counter `name` under `scope`, created at 0 on first use. */
  counter(scope: StatScope, name: string): StatHandle {
    return this.handle(scope, name, "counter");
  }

  /** The gauge `name` under `scope`, created at 0 on first use. */
  gauge(scope: StatScope, name: string): StatHandle {
    return this.handle(scope, name, "gauge");
  }

  /** The value of the stat with Envoy's full name (`cluster.foo.upstream_cx_total`), 0 when absent. */
  get(fullName: string): number {
    return this.stats.get(fullName)?.value ?? 0;
  }

  /** Envoy's `/stats` text: `name: value` per line, sorted by name. */
  text(): string {
    for (const f of this.collectors) f();
    return [...this.stats.keys()].sort().map((k) => `${k}: ${this.stats.get(k)!.value}\n`).join("");
  }

  /** Envoy's `/stats?format=prometheus`: one TYPE line per metric family, then its samples. */
  prometheus(): string {
    for (const f of this.collectors) f();
    const families = new Map<string, { type: string; samples: string[] }>();
    for (const k of [...this.stats.keys()].sort()) {
      const s = this.stats.get(k)!;
      const family = `envoy_${s.scope.kind === "server" ? "server" : s.scope.kind}_${s.name.replace(/[^a-zA-Z0-9_]/g, "_")}`;
      const label = s.scope.kind === "server" ? "" : `{${LABEL[s.scope.kind]}="${escapeLabel(s.scope.name)}"}`;
      const f = families.get(family) ?? { type: s.type, samples: [] };
      f.samples.push(`${family}${label} ${s.value}`);
      families.set(family, f);
    }
    let out = "";
    for (const [name, f] of [...families].sort(([a], [b]) => (a < b ? -1 : 1))) out += `# TYPE ${name} ${f.type}\n${f.samples.join("\n")}\n`;
    return out;
  }

  private handle(scope: StatScope, name: string, type: "counter" | "gauge"): StatHandle {
    const key = scope.kind === "server" ? `server.${name}` : `${scope.kind}.${scope.name}.${name}`;
    let s = this.stats.get(key);
    if (!s) {
      s = { scope, name, type, value: 0 };
      this.stats.set(key, s);
    }
    if (s.handle) return s.handle;
    const stat = s;
    stat.handle = {
      add: (n = 1) => void (stat.value += n),
      sub: (n = 1) => void (stat.value -= n),
      get value() {
        return stat.value;
      },
    };
    return stat.handle;
  }
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}
