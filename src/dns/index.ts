/** The DNS interface (issue 20): the wire format so far. */
export {
  decodeMessage, DnsClass, DnsRcode, DnsType, DnsWireError, encodeMessage, type DnsFlags, type DnsMessage, type DnsQuestion, type DnsRecord, type DnsRecordData,
  type SoaData, type SrvData,
} from "./wire.ts";
