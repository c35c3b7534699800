/**
 * Response trimming for the DNS interface, after Consul's agent/dns.go (trimUDPResponse, trimTCPResponse,
 * syncExtra, dnsBinaryTruncate; BEHAVIOUR.md §3.3). Pure: no I/O, the input message is never mutated.
 *
 * Contract of {@link trimResponse}:
 * - UDP: maxSize = max(512, the request's EDNS0 UDP size), capped at 65467 (65535-68). When maxSize is 512
 *   (no OPT, or one advertising ≤ 512) only the first min(8, udpAnswerLimit) answers are kept (0 gives none).
 * - TCP: the answers are first cut to 4096 (1024 when the question type is SRV).
 * - Then, while there is more than one answer and the measured size exceeds the limit (UDP maxSize-8,
 *   TCP 65523): the Authority section is dropped; if more than 100 bytes over maxSize the answer count is
 *   binary-searched (stopping within 10 bytes of maxSize), else the last answer is dropped.
 * - Size is measured as Consul does: uncompressed when `compress` is false or when the UDP count limit
 *   ran (computed here by {@link uncompressedSize}, equal to what an uncompressing encoder would write),
 *   otherwise `encodeMessage(...).length` (compressed). The reply is still sent compressed by the caller.
 * - A single answer is always kept, however big.
 * - trimmed = fewer answers than in `resp`. Then Additional is rebuilt by {@link syncExtra} from the
 *   original Additional, dropping everything not reached from a kept SRV answer — including the OPT
 *   record: the caller must re-add OPT (and ECS) after trimming. Note the size reserve of 8 bytes is
 *   smaller than an OPT RR (11+ bytes), as in Consul. When trimmed and `enableTruncate`, flags.tc is set.
 *   When not trimmed the message is returned as it was (a shallow copy).
 *
 * Deviations from Consul (deliberate):
 * - Consul's binary search can return 0 answers when the first answer alone is over maxSize; here at
 *   least one answer is kept ("a single oversized answer is still sent").
 * - Consul's TCP pre-cut does not count as trimmed and does not resync Additional; here it does both, so
 *   the TC flag and Additional reflect every cut.
 * - OPT records are never used as syncExtra targets (Consul could match an SRV target of "." to the OPT).
 * An `encodeMessage` error (e.g. an invalid address) propagates.
 */

import { DnsType, encodeMessage, type DnsMessage, type DnsRecord, type DnsRecordData } from "./wire.ts";

export interface TrimOptions {
  /** udp_answer_limit (default 3; capped at 8 internally as Consul does). */
  readonly udpAnswerLimit: number;
  /** enable_truncate: set TC when answers were cut. */
  readonly enableTruncate: boolean;
  /** Name compression on (disable_compression false) — affects the measured size as Consul measures it. */
  readonly compress: boolean;
}

/** RFC 1035's UDP size without EDNS. */
const DEFAULT_UDP_SIZE = 512;
/** Consul's maxUDPDatagramSize: 65535 less 68 bytes of IP/UDP overhead. */
const MAX_UDP_SIZE = 65535 - 68;
/** Consul's maxUDPAnswerLimit: the hard cap on udp_answer_limit. */
const MAX_UDP_ANSWER_LIMIT = 8;
/** Consul's TCP limit: 64k less 12 bytes. */
const MAX_TCP_SIZE = 65523;
/** Room kept free below the UDP maxSize (Consul: "the udp header"). */
const UDP_RESERVE = 8;
/** Over by more than this: binary-search the answer count instead of dropping one at a time. */
const BINARY_SEARCH_OVER = 100;
/** The binary search stops when the message is within this many bytes under maxSize. */
const BINARY_SEARCH_SLACK = 10;

const utf8 = new TextEncoder();

/** A name as compared by syncExtra: lower case, without a trailing dot. */
const key = (name: string): string => name.replace(/\.$/, "").toLowerCase();

/**
 * The Additional records needed by the SRV answers in `answers`: for each SRV (in order), the first record
 * of `additional` owned by its target (case-insensitive); when that record is a CNAME, its target's record
 * too, and so on. Each owner name is emitted at most once (which also stops CNAME loops). Everything else
 * (other types' extras, TXT meta, OPT) is dropped; only the first record per owner is ever used, so a
 * target with both A and AAAA keeps only the first (as in Consul).
 */
export function syncExtra(answers: readonly DnsRecord[], additional: readonly DnsRecord[]): DnsRecord[] {
  const index = new Map<string, DnsRecord>();
  for (const rr of additional) {
    if (rr.type === DnsType.OPT) continue;
    const k = key(rr.name);
    if (!index.has(k)) index.set(k, rr);
  }
  const out: DnsRecord[] = [];
  const resolved = new Set<string>();
  for (const answer of answers) {
    if (answer.data.type !== "SRV") continue;
    let target = key(answer.data.srv.target);
    while (!resolved.has(target)) {
      resolved.add(target);
      const extra = index.get(target);
      if (!extra) break;
      out.push(extra);
      if (extra.data.type !== "CNAME") break;
      target = key(extra.data.name);
    }
  }
  return out;
}

function nameSize(name: string): number {
  const n = name.replace(/\.$/, "");
  if (n === "") return 1;
  // ASCII (every name we make): one length byte per label plus the terminating zero.
  if (/^[\x00-\x7f]*$/.test(n)) return n.length + 2;
  let size = 1;
  for (const label of n.split(".")) size += utf8.encode(label).length + 1;
  return size;
}

function dataSize(d: DnsRecordData): number {
  switch (d.type) {
    case "A":
      return 4;
    case "AAAA":
      return 16;
    case "NS":
    case "CNAME":
    case "PTR":
      return nameSize(d.name);
    case "TXT":
      return d.strings.reduce((n, s) => n + 1 + utf8.encode(s).length, 0);
    case "SRV":
      return 6 + nameSize(d.srv.target);
    case "SOA":
      return nameSize(d.soa.mname) + nameSize(d.soa.rname) + 20;
    case "raw":
      return d.bytes.length;
  }
}

/** The wire size of `m` with no name compression at all (miekg's Len() with Compress false). */
export function uncompressedSize(m: DnsMessage): number {
  let size = 12;
  for (const q of m.questions) size += nameSize(q.name) + 4;
  for (const rr of [...m.answers, ...m.authority, ...m.additional]) size += nameSize(rr.name) + 10 + dataSize(rr.data);
  return size;
}

/**
 * Trims `resp` for the transport: "udp" with the request's EDNS0 UDP size (undefined when the request had no OPT),
 * or "tcp". Returns the (possibly) trimmed message (a new object; input untouched) and whether answers were cut.
 * See the module comment for the rules; the OPT record is dropped when trimmed and must be re-added by the caller.
 */
export function trimResponse(resp: DnsMessage, transport: "udp" | "tcp", ednsUdpSize: number | undefined, o: TrimOptions): { message: DnsMessage; trimmed: boolean } {
  const original = resp.answers;
  const withAnswers = (answers: readonly DnsRecord[], authority: readonly DnsRecord[]): DnsMessage => ({
    ...resp,
    answers,
    authority,
    additional: answers.length < original.length ? syncExtra(answers, resp.additional) : resp.additional,
  });

  let answers = original;
  let authority = resp.authority;
  let uncompressed = !o.compress;
  let maxSize: number;
  let limit: number;
  if (transport === "udp") {
    maxSize = Math.min(Math.max(DEFAULT_UDP_SIZE, ednsUdpSize ?? 0), MAX_UDP_SIZE);
    limit = maxSize - UDP_RESERVE;
    const maxAnswers = Math.max(0, Math.min(MAX_UDP_ANSWER_LIMIT, Math.floor(o.udpAnswerLimit)));
    if (maxSize === DEFAULT_UDP_SIZE && answers.length > maxAnswers) {
      uncompressed = true;
      answers = answers.slice(0, maxAnswers);
    }
  } else {
    maxSize = limit = MAX_TCP_SIZE;
    const cut = resp.questions[0]?.type === DnsType.SRV ? 1024 : 4096;
    if (answers.length > cut) answers = answers.slice(0, cut);
  }
  const size = (m: DnsMessage): number => (uncompressed ? uncompressedSize(m) : encodeMessage(m).length);
  // The uncompressed size bounds the compressed one: when it fits, nothing is encoded to measure.
  const over = (m: DnsMessage): boolean => uncompressedSize(m) > limit && size(m) > limit;

  while (answers.length > 1 && over(withAnswers(answers, authority))) {
    authority = [];
    if (size(withAnswers(answers, authority)) - maxSize > BINARY_SEARCH_OVER) {
      const current = answers;
      const best = binaryTruncate(current.length, maxSize, (n) => size(withAnswers(current.slice(0, n), [])));
      answers = current.slice(0, Math.max(1, best));
    } else {
      answers = answers.slice(0, -1);
    }
  }

  const trimmed = answers.length < original.length;
  const m = withAnswers(answers, authority);
  const message = { ...m, questions: [...m.questions], answers: [...m.answers], authority: [...m.authority], additional: [...m.additional] };
  return { message: trimmed && o.enableTruncate ? { ...message, flags: { ...message.flags, tc: true } } : message, trimmed };
}

/**
 * Consul's dnsBinaryTruncate: the largest answer count (up to `count`) whose message fits `maxSize`,
 * returning early at a count within 10 bytes under it; 0 when even one answer does not fit.
 */
function binaryTruncate(count: number, maxSize: number, sizeWith: (n: number) => number): number {
  let start = 0;
  let end = count + 1;
  while (end - start > 1) {
    const median = start + Math.floor((end - start) / 2);
    const len = sizeWith(median);
    if (len <= maxSize) {
      if (maxSize - len < BINARY_SEARCH_SLACK) return median;
      start = median;
    } else {
      end = median;
    }
  }
  return start;
}
