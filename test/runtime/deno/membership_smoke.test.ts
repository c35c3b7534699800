/**
 * Deno smoke suite: gossip encryption (WebCrypto AES-GCM) and the SWIM core run on Deno.
 */
import assert from "node:assert/strict";
import { seededRng } from "../../../src/platform/index.ts";
import { decryptPacket, encryptPacket, GossipKey, Keyring, Memberlist, memberlistConfig } from "../../../src/membership/index.ts";

Deno.test("gossip packets encrypt and decrypt across a key rotation", async () => {
  const rng = seededRng(1);
  const first = GossipKey.fromBytes(rng.bytes(32));
  const ring = new Keyring(first);
  const packet = await encryptPacket(ring, new TextEncoder().encode("ping"), rng);
  const second = GossipKey.fromBytes(rng.bytes(32));
  ring.install(second);
  ring.use(second);
  assert.equal(new TextDecoder().decode(await decryptPacket(ring, packet)), "ping");
  ring.remove(first);
  await assert.rejects(decryptPacket(ring, packet), { name: "DecryptError" });
});

Deno.test("two SWIM cores join and see each other alive", () => {
  const a = new Memberlist(memberlistConfig("local", { name: "a", addr: "a:1" }), seededRng(2), 0);
  const b = new Memberlist(memberlistConfig("local", { name: "b", addr: "b:1" }), seededRng(3), 0);
  const nodes = new Map([["a:1", a], ["b:1", b]]);
  a.join(["b:1"], 0);
  for (let now = 0; now < 5_000; now += 10) {
    for (const [addr, m] of nodes) {
      m.tick(now);
      const out = m.outbox();
      for (const p of out.packets) nodes.get(p.to)?.handlePacket(addr, p.bytes, now);
      for (const r of out.streamRequests) {
        const reply = nodes.get(r.to)?.handleStream(addr, r.msg, now);
        if (reply) m.handleStream(r.to, reply, now);
      }
    }
  }
  assert.deepEqual(a.members().map((m) => [m.name, m.state]), [["a", "alive"], ["b", "alive"]]);
  assert.deepEqual(b.members().map((m) => [m.name, m.state]), [["a", "alive"], ["b", "alive"]]);
});
