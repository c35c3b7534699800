import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { expect, test } from "bun:test";
import { DatacenterMapsResponseSchema } from "../gen/causeway/status/v1/status_pb.ts";
import type { DatacenterMap } from "../model/index.ts";
import { datacenterMapsMessage, datacenterMapsOf } from "./datacenter_maps.ts";

const coord = (x: number) => ({ Vec: [x, -x, 0.5, 0, 0, 0, 0, 1e-9], Error: 0.25, Adjustment: -0.001, Height: 1e-5 });

test("datacenter maps survive the wire unchanged, empty lists included", () => {
  const maps: DatacenterMap[] = [
    { Datacenter: "dc1", AreaID: "wan", Coordinates: [{ Node: "s1", Segment: "", Coord: coord(0.01) }, { Node: "s2", Segment: "", Coord: coord(0.02) }] },
    { Datacenter: "dc2", AreaID: "wan", Coordinates: [] },
  ];
  const wire = toBinary(DatacenterMapsResponseSchema, datacenterMapsMessage(maps));
  expect(datacenterMapsOf(fromBinary(DatacenterMapsResponseSchema, wire))).toEqual(maps);
  expect(datacenterMapsOf(datacenterMapsMessage([]))).toEqual([]);
});
