/**
 * structs.DatacenterMap on the wire (Status.DatacenterMaps): servers' WAN coordinates by datacenter, as a
 * server's WAN pool knows them, for client agents' /v1/coordinate/datacenters. The two functions are
 * inverse: `datacenterMapsOf(datacenterMapsMessage(m))` equals `m`.
 */
import { create } from "@bufbuild/protobuf";
import { DatacenterMapSchema, DatacenterMapsResponseSchema, NodeCoordinateSchema, type DatacenterMapsResponse } from "../gen/causeway/status/v1/status_pb.ts";
import type { DatacenterMap } from "../model/index.ts";

export function datacenterMapsMessage(maps: readonly DatacenterMap[]): DatacenterMapsResponse {
  return create(DatacenterMapsResponseSchema, {
    maps: maps.map((m) =>
      create(DatacenterMapSchema, {
        datacenter: m.Datacenter,
        areaId: m.AreaID,
        coordinates: m.Coordinates.map((c) =>
          create(NodeCoordinateSchema, {
            node: c.Node, segment: c.Segment, vec: [...c.Coord.Vec], error: c.Coord.Error, adjustment: c.Coord.Adjustment, height: c.Coord.Height,
          })
        ),
      })
    ),
  });
}

export function datacenterMapsOf(message: DatacenterMapsResponse): DatacenterMap[] {
  return message.maps.map((m) => ({
    Datacenter: m.datacenter,
    AreaID: m.areaId,
    Coordinates: m.coordinates.map((c) => ({
      Node: c.node, Segment: c.segment, Coord: { Vec: [...c.vec], Error: c.error, Adjustment: c.adjustment, Height: c.height },
    })),
  }));
}
