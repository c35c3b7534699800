/** Which JavaScript runtime runs us, e.g. "bun 1.4.5" or "deno 2.9.6". */
export function runtimeDescription(): string {
  const g = globalThis as { Bun?: { version: string }; Deno?: { version: { deno: string } } };
  if (g.Bun) return `bun ${g.Bun.version}`;
  if (g.Deno) return `deno ${g.Deno.version.deno}`;
  return `node ${process.versions.node}`;
}
