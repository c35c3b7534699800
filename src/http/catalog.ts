import type { Hono } from "hono";
import type { CatalogApi } from "./deps.ts";
import { jsonResponse, textError } from "./respond.ts";

/** /v1/catalog/datacenters: the known datacenters, nearest first. (More catalog routes come with the state store.) */
export function mountCatalog(app: Hono, catalog: CatalogApi | undefined): void {
  app.get("/v1/catalog/datacenters", async (c) => {
    if (!catalog) return textError(c, 500, "Catalog is not available on this agent");
    try {
      return jsonResponse(c, [...(await catalog.datacenters())]);
    } catch (err) {
      return textError(c, 500, (err as Error).message);
    }
  });
}
