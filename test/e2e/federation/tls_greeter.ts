/**
 * A stand-in for a service's sidecar in a lab namespace: a TLS server on `0.0.0.0:<port>` that
 * greets every connection with `<name>\n`, then echoes. Run as
 * `bun tls_greeter.ts <port> <name> <cert.pem> <key.pem>`; prints "listening" once it is.
 */
import { readFileSync } from "node:fs";
import * as tls from "node:tls";

const [port, name, cert, key] = process.argv.slice(2);
if (!port || !name || !cert || !key) throw new Error("usage: tls_greeter.ts <port> <name> <cert.pem> <key.pem>");
const server = tls.createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (s) => {
  s.on("error", () => {});
  s.write(`${name}\n`);
  s.pipe(s);
});
server.listen(Number(port), "0.0.0.0", () => console.log("listening"));
