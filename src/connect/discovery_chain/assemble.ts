/**
 * ChainAssembler: the first phase of Consul 1.8's discoverychain.Compile (compile.go: assembleChain,
 * getSplitterNode, getResolverNode, newTarget, rewriteTarget). It builds the graph nodes and targets from
 * the entries; compile.ts then prunes, flattens and checks them. Single use; mutable inside, never shared.
 */
import {
  ConfigEntryGraphError,
  isDefaultResolver,
  type MeshGatewayMode,
  type ServiceResolverConfigEntry,
  type ServiceResolverSubset,
  type ServiceRoute,
} from "../config_entries/index.ts";
import { parseDuration } from "../../lib/index.ts";
import type { DiscoveryChainSet } from "./entry_set.ts";
import { nodeKey, serviceSni, targetId } from "./names.ts";
import { checkedSubset, configuredMeshGatewayMode, externalSni } from "./target_config.ts";

/** The compiler's settings, defaults applied (see CompileRequest). */
export interface AssembleOptions {
  readonly serviceName: string;
  readonly evaluateInNamespace: string;
  readonly evaluateInDatacenter: string;
  readonly evaluateInTrustDomain: string;
  readonly useInDatacenter: string;
  readonly overrideMeshGateway: MeshGatewayMode;
  readonly overrideProtocol: string;
  /** Milliseconds; 0 = no override. */
  readonly overrideConnectTimeoutMs: number;
}

export interface MutTarget {
  readonly ID: string;
  readonly Service: string;
  readonly ServiceSubset: string;
  readonly Namespace: string;
  readonly Datacenter: string;
  meshGatewayMode: MeshGatewayMode;
  subset: ServiceResolverSubset;
  external: boolean;
  sni: string;
  readonly Name: string;
}

export interface MutNode {
  readonly Type: "router" | "splitter" | "resolver";
  readonly Name: string;
  Routes?: { Definition: ServiceRoute; NextNode: string }[];
  Splits?: { Weight: number; NextNode: string }[];
  Resolver?: { Default: boolean; ConnectTimeoutMs: number; Target: string; Failover?: { Targets: string[] } };
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

function graphError(message: string): ConfigEntryGraphError {
  return new ConfigEntryGraphError(message);
}

export class ChainAssembler {
  readonly nodes = new Map<string, MutNode>();
  readonly loadedTargets = new Map<string, MutTarget>();
  readonly retainedTargets = new Set<string>();
  readonly customizedBy = { meshGateway: false, protocol: false, connectTimeout: false };
  usesAdvancedRoutingFeatures = false;
  protocol = "";
  startNode = "";
  private readonly splitterNodes = new Map<string, MutNode>();
  private readonly resolveNodes = new Map<string, MutNode>();
  private readonly disableAdvancedRoutingFeatures: boolean;

  constructor(readonly opts: AssembleOptions, readonly entries: DiscoveryChainSet) {
    const o = opts.overrideProtocol;
    this.disableAdvancedRoutingFeatures = o !== "" && o !== "http" && o !== "http2" && o !== "grpc";
  }

  private recordNode(node: MutNode): void {
    if (node.Type === "splitter") this.splitterNodes.set(node.Name, node);
    if (node.Type === "resolver") this.resolveNodes.set(node.Resolver!.Target, node);
    this.nodes.set(nodeKey(node.Type, node.Name), node);
  }

  /**
   * Protocol of a service: its service-defaults Protocol (even when empty, which means tcp: Consul does not
   * fall back to proxy-defaults once a service-defaults entry exists), else proxy-defaults Config.protocol,
   * else tcp. All services of a chain must agree.
   */
  private recordServiceProtocol(service: string): void {
    const sd = this.entries.services.get(service);
    let protocol = sd?.Protocol ?? "";
    if (sd === undefined) {
      const p = this.entries.globalProxy?.Config?.["protocol"];
      if (typeof p === "string") protocol = p;
    }
    protocol = protocol === "" ? "tcp" : protocol.toLowerCase();
    if (this.protocol === "") this.protocol = protocol;
    else if (this.protocol !== protocol) {
      throw graphError(
        `discovery chain ${JSON.stringify(this.opts.serviceName)} uses inconsistent protocols; service ${JSON.stringify(service)} has ${JSON.stringify(protocol)} which is not ${JSON.stringify(this.protocol)}`,
      );
    }
  }

  /** Builds the graph; afterwards `startNode`, `nodes` and the targets are set. */
  assembleChain(): void {
    const name = this.opts.serviceName;
    let router = this.entries.routers.get(name);
    if (router !== undefined && this.disableAdvancedRoutingFeatures) {
      router = undefined;
      this.customizedBy.protocol = true;
    }
    if (router === undefined) {
      this.startNode = this.key(this.getSplitterOrResolverNode(this.newTarget(name, "", "", "")));
      return;
    }
    const routeNode: MutNode = { Type: "router", Name: router.Name, Routes: [] };
    this.usesAdvancedRoutingFeatures = true;
    this.recordServiceProtocol(router.Name);
    for (const route of router.Routes) {
      const dest = route.Destination ?? {};
      const svc = dest.Service || name;
      const node =
        !dest.ServiceSubset && !dest.Namespace
          ? this.getSplitterOrResolverNode(this.newTarget(svc, "", "", ""))
          : this.getResolverNode(this.newTarget(svc, dest.ServiceSubset ?? "", dest.Namespace ?? "", ""), false);
      routeNode.Routes!.push({ Definition: route, NextNode: this.key(node) });
    }
    // The catch-all route sends unmatched traffic to the next hop (newDefaultServiceRoute).
    const fallback = this.getSplitterOrResolverNode(this.newTarget(name, "", "", ""));
    routeNode.Routes!.push({ Definition: { Match: { HTTP: { PathPrefix: "/" } }, Destination: { Service: name } }, NextNode: this.key(fallback) });
    this.startNode = this.key(routeNode);
    this.recordNode(routeNode);
  }

  private key(node: MutNode): string {
    return nodeKey(node.Type, node.Name);
  }

  /** Defaults namespace and datacenter from the evaluate-in context; one object per target ID. */
  private newTarget(service: string, subset: string, namespace: string, datacenter: string): MutTarget {
    const ns = namespace || this.opts.evaluateInNamespace;
    const dc = datacenter || this.opts.evaluateInDatacenter;
    const id = targetId(service, subset, ns, dc);
    const prev = this.loadedTargets.get(id);
    if (prev !== undefined) return prev;
    const sni = serviceSni(service, subset, ns, dc, this.opts.evaluateInTrustDomain);
    const t: MutTarget = {
      ID: id, Service: service, ServiceSubset: subset, Namespace: ns, Datacenter: dc,
      meshGatewayMode: "", subset: {}, external: false, sni, Name: sni,
    };
    this.loadedTargets.set(id, t);
    return t;
  }

  /** DiscoveryTarget.CopyAndModify: a different service resets the subset; non-empty fields override. */
  private rewriteTarget(t: MutTarget, service = "", subset = "", namespace = "", datacenter = ""): MutTarget {
    let svc = t.Service, sub = t.ServiceSubset;
    if (service !== "" && service !== svc) {
      svc = service;
      sub = "";
    }
    if (subset !== "") sub = subset;
    return this.newTarget(svc, sub, namespace || t.Namespace, datacenter || t.Datacenter);
  }

  private getSplitterOrResolverNode(target: MutTarget): MutNode {
    return this.getSplitterNode(target.Service) ?? this.getResolverNode(target, false);
  }

  private getSplitterNode(name: string): MutNode | undefined {
    const prev = this.splitterNodes.get(name);
    if (prev !== undefined) return prev;
    let splitter = this.entries.splitters.get(name);
    if (splitter !== undefined && this.disableAdvancedRoutingFeatures) {
      splitter = undefined;
      this.customizedBy.protocol = true;
    }
    if (splitter === undefined) return undefined;
    const node: MutNode = { Type: "splitter", Name: name, Splits: [] };
    // Recorded before recursing so that a loop below finds it (detectCircularReferences reports it).
    this.recordNode(node);
    for (const split of splitter.Splits) {
      const svc = split.Service || name;
      if (svc !== name && !split.ServiceSubset && !split.Namespace) {
        const next = this.getSplitterNode(svc);
        if (next !== undefined) {
          node.Splits!.push({ Weight: split.Weight, NextNode: this.key(next) });
          continue;
        }
      }
      const next = this.getResolverNode(this.newTarget(svc, split.ServiceSubset ?? "", split.Namespace ?? "", ""), false);
      node.Splits!.push({ Weight: split.Weight, NextNode: this.key(next) });
    }
    this.usesAdvancedRoutingFeatures = true;
    return node;
  }

  private resolverFor(service: string): ServiceResolverConfigEntry {
    return this.entries.resolvers.get(service) ?? { Kind: "service-resolver", Name: service, CreateIndex: 0, ModifyIndex: 0 };
  }

  /**
   * Follows redirects and the default subset to the final target, builds its resolver node and, unless
   * called for a failover target, records it and resolves its failover targets (not recursively).
   */
  private getResolverNode(start: MutTarget, recursedForFailover: boolean): MutNode {
    const history: string[] = [];
    let target = start;
    let resolver: ServiceResolverConfigEntry;
    for (;;) {
      const prev = this.resolveNodes.get(target.ID);
      if (prev !== undefined) return prev;
      this.recordServiceProtocol(target.Service);
      resolver = this.resolverFor(target.Service);
      if (history.includes(target.ID)) {
        throw graphError(`detected circular resolver redirect: [${[...history, target.ID].join(" -> ")}]`);
      }
      history.push(target.ID);
      const r = resolver.Redirect;
      if (r !== undefined) {
        const redirected = this.rewriteTarget(target, r.Service, r.ServiceSubset, r.Namespace, r.Datacenter);
        if (redirected.ID !== target.ID) {
          target = redirected;
          continue;
        }
      }
      if (target.ServiceSubset === "" && resolver.DefaultSubset) {
        target = this.rewriteTarget(target, "", resolver.DefaultSubset);
        continue;
      }
      break;
    }
    const subsets = resolver.Subsets ?? {};
    if (target.ServiceSubset !== "" && !Object.hasOwn(subsets, target.ServiceSubset)) {
      throw graphError(`service ${JSON.stringify(target.Service)} does not have a subset named ${JSON.stringify(target.ServiceSubset)}`);
    }
    let connectTimeoutMs = resolver.ConnectTimeout ? parseDuration(resolver.ConnectTimeout) : 0;
    if (connectTimeoutMs <= 0) connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS;
    const override = this.opts.overrideConnectTimeoutMs;
    if (override > 0 && override !== connectTimeoutMs) {
      connectTimeoutMs = override;
      this.customizedBy.connectTimeout = true;
    }
    const node: MutNode = {
      Type: "resolver", Name: target.ID,
      Resolver: { Default: isDefaultResolver(resolver), ConnectTimeoutMs: connectTimeoutMs, Target: target.ID },
    };
    target.subset = checkedSubset(target.Service, target.ServiceSubset, subsets[target.ServiceSubset]);
    const sni = externalSni(this.entries, target.Service, resolver);
    if (sni !== undefined) {
      target.sni = sni;
      target.external = true;
    }
    this.applyMeshGateway(target);
    this.retainedTargets.add(target.ID);
    if (recursedForFailover) return node;
    this.recordNode(node);
    this.addFailover(node, target, resolver);
    return node;
  }

  /**
   * Consul 1.8: no mesh gateway for external targets or targets in the datacenter the chain is used in;
   * otherwise the configured mode, replaced by the override when that differs (which customizes the chain).
   */
  private applyMeshGateway(target: MutTarget): void {
    if (target.external || target.Datacenter === this.opts.useInDatacenter) {
      target.meshGatewayMode = "";
      return;
    }
    let mode = configuredMeshGatewayMode(this.entries, target.Service);
    const o = this.opts.overrideMeshGateway;
    if (o !== "" && mode !== o) {
      mode = o;
      this.customizedBy.meshGateway = true;
    }
    target.meshGatewayMode = mode;
  }

  /** Failover[subset] else Failover["*"]; one target per datacenter (or one without), never the target itself. */
  private addFailover(node: MutNode, target: MutTarget, resolver: ServiceResolverConfigEntry): void {
    const f = resolver.Failover ?? {};
    const rule = Object.hasOwn(f, target.ServiceSubset) ? f[target.ServiceSubset] : f["*"];
    if (rule === undefined) return;
    const dcs = rule.Datacenters && rule.Datacenters.length > 0 ? rule.Datacenters : [""];
    const failoverTargets = dcs
      .map((dc) => this.rewriteTarget(target, rule.Service, rule.ServiceSubset, rule.Namespace, dc))
      .filter((t) => t.ID !== target.ID);
    if (failoverTargets.length === 0) return;
    node.Resolver!.Failover = { Targets: failoverTargets.map((t) => this.getResolverNode(t, true).Resolver!.Target) };
  }
}
