/**
 * The `grpc-message` header as the gRPC spec writes it (PROTOCOL-HTTP2.md, "Percent-Encoded"): UTF-8,
 * with only '%' and bytes outside 0x20-0x7E percent-encoded. ConnectRPC writes it with
 * encodeURIComponent, which also encodes `, ; / ? : @ & = + $ #` and space; grpc-go and Envoy decode
 * either, but grpc-js decodes with decodeURI, which leaves those escaped, so a proxyless client showed
 * "no healthy endpoint%2C retrying". We re-encode on the way out.
 */
import type * as http2 from "node:http2";

const GRPC_MESSAGE = "grpc-message";
const utf8 = new TextEncoder();

/** `text` percent-encoded as the gRPC spec asks: '%' and every byte outside 0x20-0x7E, nothing else. */
export function encodeGrpcMessage(text: string): string {
  let out = "";
  for (const byte of utf8.encode(text)) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** A `grpc-message` value written with encodeURIComponent, re-encoded per the spec; one that does not decode is left as it is. */
export function respecGrpcMessage(uriEncoded: string): string {
  try {
    return encodeGrpcMessage(decodeURIComponent(uriEncoded));
  } catch {
    return uriEncoded;
  }
}

function respecHeaders<T>(headers: T): T {
  if (headers === null || typeof headers !== "object" || Array.isArray(headers)) return headers;
  const value = (headers as Record<string, unknown>)[GRPC_MESSAGE];
  if (typeof value !== "string") return headers;
  return { ...headers, [GRPC_MESSAGE]: respecGrpcMessage(value) };
}

/**
 * Makes `res` write `grpc-message` per the spec, in trailers (`addTrailers`) and in a trailers-only
 * response's headers (`writeHead`), which are the two ways connect-node writes a status.
 */
export function specGrpcMessages(res: http2.Http2ServerResponse): void {
  const addTrailers = res.addTrailers.bind(res);
  res.addTrailers = (trailers) => addTrailers(respecHeaders(trailers));
  const writeHead = res.writeHead.bind(res) as (status: number, ...rest: unknown[]) => http2.Http2ServerResponse;
  res.writeHead = ((status: number, ...rest: unknown[]) => writeHead(status, ...rest.map(respecHeaders))) as typeof res.writeHead;
}
