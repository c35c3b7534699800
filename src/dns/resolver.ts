/**
 * Answers one DNS request under the agent's domain (Consul's handleQuery and dispatch; src/dns/BEHAVIOUR.md
 * sections 0-3): header checks, the lookup through a DnsCatalog, records, rcode, SOA and NS, EDNS0 and
 * trimming. No sockets: the server (server.ts) feeds requests and forwards what `answer` hands back
 * as "recurse" to the recursors.
 *
 * Lookups run with the agent's default token (the catalog's business): ACL-filtered entries are simply
 * absent, so they answer NXDOMAIN like unknown ones.
 */
import { parseDuration } from "../lib/index.ts";
import type { CheckServiceNode, Node, NodeServices, ServiceNode } from "../model/index.ts";
import { shuffled, type Rng } from "../platform/index.ts";
import type { DnsConfig } from "./config.ts";
import { serviceTtlFor } from "./config.ts";
import { domainIn, parseQueryName, servedDomains, type DnsLookup } from "./query_name.ts";
import { addressRecord, canonicalIp, healthy, instanceRecords, metaTxtRecords, nodeAddress, reverseLookupAddress } from "./records.ts";
import { trimResponse } from "./trim.ts";
import { DnsClass, DnsRcode, DnsType, type DnsMessage, type DnsRecord } from "./wire.ts";

/** What the resolver reads, in any datacenter. A rejection whose message says "No path to datacenter" is NXDOMAIN; any other SERVFAIL. */
export interface DnsCatalog {
  /** The node and its services (name matched case-insensitively), or null. */
  nodeServices(node: string, datacenter: string): Promise<NodeServices | null>;
  /** A service's instances with their checks; `tag` filters, `connect` asks for Connect-capable ones. */
  serviceNodes(service: string, tag: string | undefined, connect: boolean, datacenter: string): Promise<readonly CheckServiceNode[]>;
  /**
   * Executes a prepared query by ID or name (templates and failover included) as asked from
   * `datacenter` (undefined: this one) for a client at `sourceIp`; null when no query matches.
   * `datacenter` of the result is where the instances came from; `ttl` the query's DNS TTL ("" unset).
   */
  preparedQuery(idOrName: string, datacenter: string | undefined, sourceIp: string): Promise<PreparedQueryAnswer | null>;
  /** Every node of `datacenter` (reverse lookups). */
  nodes(datacenter: string): Promise<readonly Node[]>;
  /** The service instances registered with exactly `address` in `datacenter` (reverse lookups of service addresses). */
  servicesAt(address: string, datacenter: string): Promise<readonly ServiceNode[]>;
}

export interface PreparedQueryAnswer {
  readonly service: string;
  readonly datacenter: string;
  readonly nodes: readonly CheckServiceNode[];
  readonly ttl: string;
}

export type DnsAnswer = { readonly kind: "reply"; readonly message: DnsMessage } | { readonly kind: "recurse" } | { readonly kind: "drop" };

const OPCODE_QUERY = 0, OPCODE_NOTIFY = 4;
/** Consul's maxRecursionLevelDefault: how deep CNAME targets under our domain are followed. */
const MAX_RECURSION = 3;

class NoData extends Error {}

export interface DnsResolver {
  /** `peerIp`: the client's address (prepared queries sort near it). */
  answer(request: DnsMessage, transport: "udp" | "tcp", peerIp?: string): Promise<DnsAnswer>;
}

export function createDnsResolver(o: {
  readonly config: DnsConfig; readonly catalog: DnsCatalog; readonly rng: Rng; readonly nowSeconds: () => number;
  /** The recursors' CNAME/A/AAAA answers for a hostname outside our domain (recursors.ts lookup); absent: such names stay unresolved. */
  readonly external?: (name: string) => Promise<readonly DnsRecord[]>;
}): DnsResolver {
  const cfg = o.config;
  /** The served domains, computed once (longest first). */
  const domains = servedDomains(cfg.domain, cfg.altDomain);
  const underDomain = (name: string) => domainIn(name, domains) !== undefined;
  /** The primary domain without its dot: what PTR targets and reverse-lookup SOAs use (Consul's). */
  const primary = cfg.domain.replace(/\.$/, "");

  const soa = (zone: string): DnsRecord => ({
    name: zone, type: DnsType.SOA, class: DnsClass.IN, ttl: cfg.soa.minTtl,
    data: { type: "SOA", soa: { mname: `ns.${zone}`, rname: `hostmaster.${zone}`, serial: o.nowSeconds() >>> 0, refresh: cfg.soa.refresh, retry: cfg.soa.retry, expire: cfg.soa.expire, minimum: cfg.soa.minTtl } },
  });

  /**
   * Consul's nameservers: up to 3 healthy servers (the "consul" service here), shuffled, whose node
   * names are valid DNS labels, as NS records of the zone with their addresses as glue.
   */
  const nameservers = async (zone: string): Promise<{ ns: DnsRecord[]; glue: DnsRecord[] }> => {
    let servers: readonly CheckServiceNode[] = [];
    try {
      servers = shuffled(healthy(await o.catalog.serviceNodes("consul", undefined, false, cfg.datacenter), false), o.rng);
    } catch {
      return { ns: [], glue: [] };
    }
    const ns: DnsRecord[] = [];
    const glue: DnsRecord[] = [];
    for (const s of servers.filter((x) => /^[A-Za-z0-9-]+$/.test(x.Node.Node)).slice(0, 3)) {
      const target = `${s.Node.Node}.node.${cfg.datacenter}.${zone}`.toLowerCase();
      ns.push({ name: zone, type: DnsType.NS, class: DnsClass.IN, ttl: cfg.nodeTtl, data: { type: "NS", name: target } });
      const a = addressRecord(target, s.Node.Address, DnsType.ANY, cfg.nodeTtl);
      if (a) glue.push(a);
    }
    return { ns, glue };
  };

  /** A PTR for the node (this datacenter) whose address the in-addr.arpa or ip6.arpa name spells, else for a service registered with it; if any. */
  const pointer = async (qname: string): Promise<DnsRecord | undefined> => {
    const ip = reverseLookupAddress(qname);
    if (ip === undefined) return undefined;
    // Compared in canonical form, so "::0:1" and "::1" are the same node address.
    const node = (await o.catalog.nodes(cfg.datacenter)).find((n) => canonicalIp(n.Address) === ip);
    const ptr = (target: string): DnsRecord => ({ name: qname, type: DnsType.PTR, class: DnsClass.IN, ttl: 0, data: { type: "PTR", name: target } });
    if (node) return ptr(`${node.Node}.node.${node.Datacenter || cfg.datacenter}.${primary}`);
    // Then a service registered with that address (the node's address wins, as in Consul).
    const service = (await o.catalog.servicesAt(ip, cfg.datacenter))[0];
    return service ? ptr(`${service.ServiceName}.service.${service.Datacenter || cfg.datacenter}.${primary}`) : undefined;
  };

  /**
   * Consul's resolveCNAME: a target under our domain is looked up (ANY) with one level less (3 at most,
   * so alias loops end); another name is asked of the recursors (`external`). Only CNAME, A and AAAA
   * records are kept; `ttl` replaces theirs (services); nothing at level 0.
   */
  const resolveTarget = async (target: string, depth: number, peerIp: string, ttl?: number): Promise<DnsRecord[]> => {
    if (depth <= 0) return [];
    const keep = (x: DnsRecord) => x.type === DnsType.CNAME || x.type === DnsType.A || x.type === DnsType.AAAA;
    try {
      // Other names through the recursors: at most 5 records (Consul's maxRecurseRecords).
      const found = underDomain(target) ? (await dispatch(target, DnsType.ANY, peerIp, depth - 1)).answers.filter(keep) : (await o.external?.(target) ?? []).filter(keep).slice(0, 5);
      return found.map((x) => (ttl === undefined ? x : { ...x, ttl }));
    } catch {
      return [];
    }
  };

  const nodeRecords = async (lookup: Extract<DnsLookup, { kind: "node" }>, qname: string, qtype: number, depth: number, peerIp: string) => {
    const found = await o.catalog.nodeServices(lookup.node, lookup.datacenter ?? cfg.datacenter);
    if (!found) return undefined;
    const answers: DnsRecord[] = [];
    const additional: DnsRecord[] = [];
    if (![DnsType.A, DnsType.AAAA, DnsType.ANY, DnsType.TXT].includes(qtype as 1)) return { answers, additional, soa: false };
    const meta = metaTxtRecords(qname, found.Node.Meta ?? {}, cfg.nodeTtl);
    if (qtype !== DnsType.TXT) {
      const addr = nodeAddress(found.Node, qtype);
      const a = addressRecord(qname, addr, qtype, cfg.nodeTtl);
      if (a) answers.push(a);
      else if (addr !== "" && !/^[0-9a-f:.]+$/i.test(addr)) {
        answers.push({ name: qname, type: DnsType.CNAME, class: DnsClass.IN, ttl: cfg.nodeTtl, data: { type: "CNAME", name: addr } });
        answers.push(...await resolveTarget(addr, depth, peerIp));
      }
    }
    if (qtype === DnsType.TXT || qtype === DnsType.ANY) answers.push(...meta);
    else if (cfg.enableAdditionalNodeMetaTxt) additional.push(...meta);
    return { answers, additional, soa: false };
  };

  const serviceRecords = async (
    instances: readonly CheckServiceNode[], qname: string, qtype: number, ttl: number, datacenter: string, responseDomain: string, depth: number, peerIp: string,
  ) => {
    const answers: DnsRecord[] = [];
    const additional: DnsRecord[] = [];
    const seen = new Set<string>();
    let cname: DnsRecord | undefined;
    let addressed = 0;
    for (const instance of instances) {
      const r = instanceRecords({ instance, qname, qtype, ttl, datacenter, domain: responseDomain });
      if (qtype === DnsType.SRV) {
        if (!r.srv) continue;
        const key = `${instance.Node.Node}:${r.srv.data.type === "SRV" ? `${r.srv.data.srv.target}:${r.srv.data.srv.port}` : ""}`;
        if (seen.has(key)) continue;
        seen.add(key);
        answers.push(r.srv);
        if (r.extra) additional.push(r.extra);
        else if (r.srv.data.type === "SRV") additional.push(...await resolveTarget(r.srv.data.srv.target, depth, peerIp, ttl));
        if (cfg.enableAdditionalNodeMetaTxt) additional.push(...metaTxtRecords(`${instance.Node.Node}.node.${datacenter}.${responseDomain}`, instance.Node.Meta ?? {}, ttl));
        continue;
      }
      if (!r.answer) continue;
      if (r.answer.type === DnsType.CNAME) {
        cname ??= r.answer;
        continue;
      }
      const key = r.answer.data.type === "A" || r.answer.data.type === "AAAA" ? r.answer.data.address : "";
      if (seen.has(key)) continue;
      seen.add(key);
      answers.push(r.answer);
      if (cfg.aRecordLimit > 0 && ++addressed >= cfg.aRecordLimit) break;
    }
    // Only when no instance has an address, and one chain at most (Consul's serviceNodeRecords).
    if (answers.length === 0 && cname) {
      answers.push(cname);
      if (cname.data.type === "CNAME") answers.push(...await resolveTarget(cname.data.name, depth, peerIp, ttl));
    }
    return { answers, additional };
  };

  const dispatch = async (qname: string, qtype: number, peerIp: string, depth = MAX_RECURSION): Promise<{ rcode: number; answers: DnsRecord[]; additional: DnsRecord[]; soa: boolean }> => {
    const parsed = parseQueryName(qname, qtype, cfg.domain, cfg.altDomain, domains);
    const lookup = parsed.lookup;
    const nx = { rcode: DnsRcode.NXDOMAIN, answers: [], additional: [], soa: true };
    switch (lookup.kind) {
      case "invalid":
        return nx;
      case "addr": {
        if (lookup.address === undefined) return { rcode: DnsRcode.NOERROR, answers: [], additional: [], soa: false };
        const wanted = lookup.family === 4 ? DnsType.A : DnsType.AAAA;
        const rec = addressRecord(qname, lookup.address, wanted, cfg.nodeTtl)!;
        return qtype === wanted || qtype === DnsType.ANY
          ? { rcode: DnsRcode.NOERROR, answers: [rec], additional: [], soa: false }
          : { rcode: DnsRcode.NOERROR, answers: [], additional: [rec], soa: false };
      }
      case "node": {
        const r = await nodeRecords(lookup, qname, qtype, depth, peerIp);
        return r ? { rcode: DnsRcode.NOERROR, ...r } : nx;
      }
      case "service":
      case "connect": {
        const dc = lookup.datacenter ?? cfg.datacenter;
        const tag = lookup.kind === "service" ? lookup.tag : undefined;
        const all = await o.catalog.serviceNodes(lookup.service, tag, lookup.kind === "connect", dc);
        const instances = shuffled(healthy(all, cfg.onlyPassing), o.rng);
        if (instances.length === 0) return nx;
        const r = await serviceRecords(instances, qname, qtype, serviceTtlFor(cfg.serviceTtl, lookup.service), dc, parsed.responseDomain, depth, peerIp);
        if (r.answers.length === 0) throw new NoData();
        return { rcode: DnsRcode.NOERROR, ...r, soa: false };
      }
      case "query": {
        // The servers apply the query's own health rules and order (and its failover): no filter or shuffle here.
        const r = await o.catalog.preparedQuery(lookup.query, lookup.datacenter, peerIp);
        if (!r || r.nodes.length === 0) return nx;
        const ttl = r.ttl ? Math.floor(parseDuration(r.ttl) / 1000) : serviceTtlFor(cfg.serviceTtl, r.service.toLowerCase());
        const records = await serviceRecords(r.nodes, qname, qtype, ttl, r.datacenter, parsed.responseDomain, depth, peerIp);
        if (records.answers.length === 0) throw new NoData();
        return { rcode: DnsRcode.NOERROR, ...records, soa: false };
      }
      case "ingress":
        // Not served: ingress gateways answer as unknown names (the issue leaves them out).
        return nx;
    }
  };

  return {
    async answer(req, transport, peerIp = "") {
      if (req.flags.qr) return { kind: "drop" };
      const reply = (rcode: number, rest: Partial<DnsMessage> = {}, aa = false): DnsMessage => ({
        id: req.id,
        flags: { qr: true, opcode: req.flags.opcode, aa, tc: false, rd: req.flags.opcode === OPCODE_QUERY && req.flags.rd, ra: cfg.recursors.length > 0, rcode },
        questions: req.questions, answers: [], authority: [], additional: [], ...rest,
      });
      if (req.flags.opcode !== OPCODE_QUERY && req.flags.opcode !== OPCODE_NOTIFY) return { kind: "reply", message: { ...reply(DnsRcode.NOTIMP), questions: [], flags: { ...reply(DnsRcode.NOTIMP).flags, ra: false } } };
      if (req.questions.length !== 1) return { kind: "reply", message: { ...reply(DnsRcode.FORMERR), questions: [], flags: { ...reply(DnsRcode.FORMERR).flags, ra: false } } };
      const q = req.questions[0]!;
      const opt = req.additional.find((r) => r.type === DnsType.OPT);
      if (/\.arpa\.?$/i.test(q.name)) {
        // Reverse lookups: a node's PTR; a miss goes to the recursors, or is NXDOMAIN (as Consul 1.17+
        // answers; earlier versions answered SERVFAIL).
        let ptr: DnsRecord | undefined;
        try {
          ptr = await pointer(q.name);
        } catch {
          return { kind: "reply", message: reply(DnsRcode.SERVFAIL, {}, true) };
        }
        if (ptr) return { kind: "reply", message: reply(DnsRcode.NOERROR, { answers: [ptr] }, true) };
        if (cfg.recursors.length > 0) return { kind: "recurse" };
        return { kind: "reply", message: reply(DnsRcode.NXDOMAIN, { authority: [soa(primary)] }, true) };
      }
      if (!underDomain(q.name)) {
        if (cfg.recursors.length > 0) return { kind: "recurse" };
        const refused = reply(DnsRcode.REFUSED);
        return { kind: "reply", message: { ...refused, flags: { ...refused.flags, ra: false } } };
      }
      const zone = domainIn(q.name, domains)!;
      let message: DnsMessage;
      if (q.type === DnsType.SOA) {
        const { ns, glue } = await nameservers(zone);
        message = reply(DnsRcode.NOERROR, { answers: [soa(zone)], authority: ns, additional: glue }, true);
      } else if (q.type === DnsType.NS) {
        const { ns, glue } = await nameservers(zone);
        message = reply(DnsRcode.NOERROR, { answers: ns, additional: glue }, true);
      }
      else {
        try {
          const r = await dispatch(q.name, q.type, peerIp);
          message = reply(r.rcode, { answers: r.answers, additional: r.additional, authority: r.soa ? [soa(zone)] : [] }, true);
        } catch (err) {
          if (err instanceof NoData) message = reply(DnsRcode.NOERROR, { authority: [soa(zone)] }, true);
          else if (/No path to datacenter|Query not found/i.test((err as Error)?.message ?? "")) message = reply(DnsRcode.NXDOMAIN, { authority: [soa(zone)] }, true);
          else message = reply(DnsRcode.SERVFAIL, {}, true);
        }
      }
      const trimmed = trimResponse(message, transport, opt ? opt.class : undefined, {
        udpAnswerLimit: cfg.udpAnswerLimit, enableTruncate: cfg.enableTruncate, compress: !cfg.disableCompression,
      }).message;
      // EDNS0: a fresh OPT echoing the requester's UDP size (Consul's setEDNS), after trimming dropped theirs.
      const withOpt = opt ? { ...trimmed, additional: [...trimmed.additional.filter((r) => r.type !== DnsType.OPT), { name: "", type: DnsType.OPT, class: opt.class, ttl: 0, data: { type: "raw" as const, bytes: new Uint8Array(0) } }] } : trimmed;
      return { kind: "reply", message: withOpt };
    },
  };
}
