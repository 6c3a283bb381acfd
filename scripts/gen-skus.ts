/**
 * Generates `src/services/compute/data/skus.json`, the compute SKU catalog Stratus serves
 * (spec: resource-manager §2.2, §4.3; reference §3). Deterministic: the same input tables
 * give byte-identical output (no clock, no randomness; every "choice" is a hash of the SKU
 * name and location). Run with `npx tsx scripts/gen-skus.ts`.
 *
 * Sources of the figures (public size tables of the real service's documentation and the
 * published `ResourceSkus_List` examples): vCPUs, memory, max data disks, temp disk size,
 * NIC counts, ACUs, cached / uncached disk IOPS and throughput per size; disk tiers with
 * their sizes, IOPS and throughput; availability-set fault-domain counts; dedicated host
 * SKUs with their cores. Per-size IO figures follow each family's published per-vCPU
 * scaling (e.g. Dsv3: 1,600 uncached IOPS and 24 MBps per vCPU, capped at the family max).
 * Where a figure is not published for a size it is derived from that scaling; the data
 * README lists what is exact and what is derived.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { ResourceSku as Sku, ResourceSkuCapability as Cap, ResourceSkuLocationInfo as LocationInfo, ResourceSkuRestriction as Restriction } from '../src/services/compute/model.ts';

// ---------------------------------------------------------------- helpers

/** A stable 32-bit hash of the parts. */
function h(...parts: string[]): number {
  return createHash('sha256').update(parts.join('|')).digest().readUInt32BE(0);
}
/** A stable uuid-shaped id from the parts (meter ids). */
function stableId(...parts: string[]): string {
  const x = createHash('sha256').update(parts.join('|')).digest('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-4${x.slice(13, 16)}-${'89ab'[parseInt(x[16]!, 16) % 4]}${x.slice(17, 20)}-${x.slice(20, 32)}`;
}
const tf = (b: boolean) => (b ? 'True' : 'False');
const cap = (name: string, value: string | number | boolean): Cap => ({ name, value: typeof value === 'boolean' ? tf(value) : String(value) });
const MiB = 1024 * 1024;

// ---------------------------------------------------------------- regions

/** Regions: name, whether it has availability zones, and its tier (1: every family, 2: most, 3: the common ones only). */
const regions: { name: string; zones: boolean; tier: 1 | 2 | 3 }[] = [
  { name: 'eastus', zones: true, tier: 1 },
  { name: 'eastus2', zones: true, tier: 1 },
  { name: 'westus', zones: false, tier: 2 },
  { name: 'westus2', zones: true, tier: 1 },
  { name: 'westus3', zones: true, tier: 1 },
  { name: 'centralus', zones: true, tier: 1 },
  { name: 'northcentralus', zones: false, tier: 2 },
  { name: 'southcentralus', zones: true, tier: 1 },
  { name: 'westcentralus', zones: false, tier: 3 },
  { name: 'canadacentral', zones: true, tier: 2 },
  { name: 'canadaeast', zones: false, tier: 3 },
  { name: 'brazilsouth', zones: true, tier: 2 },
  { name: 'northeurope', zones: true, tier: 1 },
  { name: 'westeurope', zones: true, tier: 1 },
  { name: 'uksouth', zones: true, tier: 1 },
  { name: 'ukwest', zones: false, tier: 3 },
  { name: 'francecentral', zones: true, tier: 2 },
  { name: 'germanywestcentral', zones: true, tier: 2 },
  { name: 'swedencentral', zones: true, tier: 2 },
  { name: 'switzerlandnorth', zones: true, tier: 3 },
  { name: 'eastasia', zones: true, tier: 2 },
  { name: 'southeastasia', zones: true, tier: 1 },
  { name: 'japaneast', zones: true, tier: 1 },
  { name: 'japanwest', zones: false, tier: 3 },
  { name: 'australiaeast', zones: true, tier: 1 },
  { name: 'centralindia', zones: true, tier: 2 },
  { name: 'koreacentral', zones: true, tier: 2 },
];

/** Edge zones (extended locations) attached to a few parent regions. */
const edgeZones: Record<string, string[]> = {
  westus: ['Las Vegas', 'Seattle', 'Portland'],
  eastus: ['attatlanta1', 'attnewyork1'],
  southcentralus: ['attdallas1'],
};

/** Availability classes: which regions a family is offered in. */
type Avail = 'all' | 'wide' | 'common' | 'hpc' | 'gpu' | 'mem' | string[];
function regionsFor(a: Avail): string[] {
  if (Array.isArray(a)) return a;
  switch (a) {
    case 'all':
      return regions.map((r) => r.name);
    case 'wide':
      return regions.filter((r) => r.tier <= 2).map((r) => r.name);
    case 'common':
      return regions.filter((r) => r.tier === 1).map((r) => r.name);
    case 'hpc':
      return ['eastus', 'southcentralus', 'westeurope', 'northeurope', 'westus2', 'uksouth', 'southeastasia', 'centralindia'];
    case 'gpu':
      return ['eastus', 'eastus2', 'westus2', 'southcentralus', 'northeurope', 'westeurope', 'uksouth', 'japaneast', 'australiaeast', 'southeastasia', 'centralus'];
    case 'mem':
      return ['eastus', 'eastus2', 'westus2', 'westeurope', 'northeurope', 'uksouth', 'australiaeast', 'japaneast', 'southeastasia', 'canadacentral', 'centralindia'];
  }
}
const zoneRegions = new Set(regions.filter((r) => r.zones).map((r) => r.name));

// ---------------------------------------------------------------- virtual machine sizes

interface Vm {
  size: string;
  family: string;
  vcpus: number;
  avail?: number; // vCPUsAvailable (constrained-core sizes)
  mem: number; // GiB
  disks: number;
  temp: number; // GiB, 0: no temp disk
  nics: number;
  acus?: number;
  premium: boolean;
  accel: boolean;
  gens: string;
  arch: string;
  perCore: number;
  lowPri: boolean;
  ephemeral: boolean;
  encHost: boolean;
  rdma: boolean;
  gpus?: number;
  uncIops: number;
  uncMBps: number;
  cachedIops?: number; // combined temp disk and cached IOPS
  cachedMBps?: number;
  cacheGiB?: number;
  where: Avail;
  edge?: boolean; // offered in edge zones
}

const vms: Vm[] = [];
/** Adds a family: rows of [size, vCPUs, memory GiB, max data disks, temp GiB, NICs, (vCPUsAvailable)]. */
function family(base: Omit<Vm, 'size' | 'vcpus' | 'mem' | 'disks' | 'temp' | 'nics' | 'uncIops' | 'uncMBps' | 'cachedIops' | 'cachedMBps' | 'cacheGiB'> & {
  io: (vcpus: number) => { uncIops: number; uncMBps: number; cachedIops?: number; cachedMBps?: number; cacheGiB?: number };
  rows: [string, number, number, number, number, number, number?][];
}) {
  const { io, rows, ...rest } = base;
  for (const [size, vcpus, mem, disks, temp, nics, avail] of rows) {
    vms.push({ ...rest, size, vcpus, avail, mem, disks, temp, nics, ...io(vcpus) });
  }
}
/** Per-vCPU IO scaling, capped. */
const scale = (iopsPer: number, mbpsPer: number, maxIops: number, maxMBps: number, cached?: { iopsPer: number; mbpsPer: number; cachePer: number; maxIops: number; maxMBps: number }) => (v: number) => ({
  uncIops: Math.min(iopsPer * v, maxIops),
  uncMBps: Math.min(mbpsPer * v, maxMBps),
  ...(cached ? { cachedIops: Math.min(cached.iopsPer * v, cached.maxIops), cachedMBps: Math.min(cached.mbpsPer * v, cached.maxMBps), cacheGiB: cached.cachePer * v } : {}),
});
const gen12 = 'V1,V2';
const common = { arch: 'x64', lowPri: true, encHost: true, rdma: false } as const;

// B-series (burstable)
family({
  ...common, family: 'standardBSFamily', acus: undefined, premium: true, accel: false, gens: gen12, perCore: 1, ephemeral: false, where: 'all', edge: true,
  io: (v) => ({ uncIops: Math.min(320 * 2 ** Math.ceil(Math.log2(Math.max(v, 1))), 6400 * 2), uncMBps: Math.min(10 * 2 ** Math.ceil(Math.log2(Math.max(v, 1))), 480), cachedIops: 200 * v, cachedMBps: 10 * v }),
  rows: [
    ['B1ls', 1, 0.5, 2, 4, 2], ['B1s', 1, 1, 2, 4, 2], ['B1ms', 1, 2, 2, 4, 2], ['B2s', 2, 4, 4, 8, 3], ['B2ms', 2, 8, 4, 16, 3],
    ['B4ms', 4, 16, 8, 32, 4], ['B8ms', 8, 32, 16, 64, 4], ['B12ms', 12, 48, 16, 96, 6], ['B16ms', 16, 64, 32, 128, 8], ['B20ms', 20, 80, 32, 160, 8],
  ],
});
// Av2
family({
  ...common, family: 'standardAv2Family', acus: 100, premium: false, accel: false, gens: 'V1', perCore: 1, ephemeral: false, encHost: false, where: 'all',
  io: (v) => ({ uncIops: 500 * Math.min(v * 2, 16), uncMBps: 0, cachedIops: 1000 * v, cachedMBps: 20 * v }),
  rows: [['A1_v2', 1, 2, 2, 10, 2], ['A2_v2', 2, 4, 4, 20, 2], ['A4_v2', 4, 8, 8, 40, 4], ['A8_v2', 8, 16, 16, 80, 8], ['A2m_v2', 2, 16, 4, 20, 2], ['A4m_v2', 4, 32, 8, 40, 4], ['A8m_v2', 8, 64, 16, 80, 8]],
});
// Dv2 / DSv2 (and the memory-optimized 11–15)
const dv2Rows: [string, number, number, number, number, number][] = [
  ['1', 1, 3.5, 4, 50, 2], ['2', 2, 7, 8, 100, 2], ['3', 4, 14, 16, 200, 4], ['4', 8, 28, 32, 400, 8], ['5', 16, 56, 64, 800, 8],
  ['11', 2, 14, 8, 100, 2], ['12', 4, 28, 16, 200, 4], ['13', 8, 56, 32, 400, 8], ['14', 16, 112, 64, 800, 8], ['15', 20, 140, 64, 1000, 8],
];
family({ ...common, family: 'standardDv2Family', acus: 210, premium: false, accel: true, gens: gen12, perCore: 1, ephemeral: false, where: 'all', io: scale(500, 0, 32000, 0), rows: dv2Rows.map(([n, ...r]) => [`D${n}_v2`, ...r]) });
family({
  ...common, family: 'standardDSv2Family', acus: 210, premium: true, accel: true, gens: gen12, perCore: 1, ephemeral: true, where: 'all', edge: true,
  io: scale(3200, 48, 51200, 768, { iopsPer: 4000, mbpsPer: 32, cachePer: 43, maxIops: 64000, maxMBps: 512 }),
  // Premium-storage sizes keep a smaller temp disk (the rest is the read cache).
  rows: dv2Rows.map(([n, v, m, d, , nic]) => [`DS${n}_v2`, v, m, d, ({ '1': 7, '2': 14, '3': 28, '4': 56, '5': 112, '11': 28, '12': 56, '13': 112, '14': 224, '15': 280 } as Record<string, number>)[n]!, nic]),
});
// Dv3 / Dsv3, Ev3 / Esv3
const v3 = [2, 4, 8, 16, 32, 48, 64];
const v3Nics = (v: number) => (v <= 2 ? 2 : v <= 4 ? 2 : v <= 8 ? 4 : 8);
const dataDisks = (v: number) => Math.min(v * 2, 32);
family({ ...common, family: 'standardDv3Family', acus: 160, premium: false, accel: true, gens: gen12, perCore: 2, ephemeral: false, where: 'all', io: scale(1000, 0, 64000, 0), rows: v3.map((v) => [`D${v}_v3`, v, v * 4, dataDisks(v), v * 25, v3Nics(v)]) });
family({
  ...common, family: 'standardDSv3Family', acus: 160, premium: true, accel: true, gens: gen12, perCore: 2, ephemeral: true, where: 'all', edge: true,
  io: scale(1600, 24, 80000, 1200, { iopsPer: 2000, mbpsPer: 16, cachePer: 25, maxIops: 128000, maxMBps: 1024 }),
  rows: v3.map((v) => [`D${v}s_v3`, v, v * 4, dataDisks(v), v * 8, v3Nics(v)]),
});
const ev3Mem = (v: number) => (v === 64 ? 432 : v * 8);
family({ ...common, family: 'standardEv3Family', acus: 160, premium: false, accel: true, gens: gen12, perCore: 2, ephemeral: false, where: 'all', io: scale(1000, 0, 64000, 0), rows: [...v3.map((v): [string, number, number, number, number, number] => [`E${v}_v3`, v, ev3Mem(v), dataDisks(v), v * 25, v3Nics(v)]), ['E64i_v3', 64, 432, 32, 1600, 8]] });
family({
  ...common, family: 'standardESv3Family', acus: 160, premium: true, accel: true, gens: gen12, perCore: 2, ephemeral: true, where: 'all', edge: true,
  io: scale(1600, 24, 80000, 1200, { iopsPer: 2000, mbpsPer: 16, cachePer: 25, maxIops: 128000, maxMBps: 1024 }),
  rows: [
    ...v3.map((v): [string, number, number, number, number, number] => [`E${v}s_v3`, v, ev3Mem(v), dataDisks(v), v * 16, v3Nics(v)]),
    ['E64is_v3', 64, 432, 32, 864, 8],
    ['E4-2s_v3', 4, 32, 8, 64, 2, 2], ['E8-4s_v3', 8, 64, 16, 128, 4, 4], ['E8-2s_v3', 8, 64, 16, 128, 4, 2], ['E16-8s_v3', 16, 128, 32, 256, 8, 8], ['E16-4s_v3', 16, 128, 32, 256, 8, 4],
    ['E32-16s_v3', 32, 256, 32, 512, 8, 16], ['E32-8s_v3', 32, 256, 32, 512, 8, 8], ['E64-32s_v3', 64, 432, 32, 864, 8, 32], ['E64-16s_v3', 64, 432, 32, 864, 8, 16],
  ],
});
// v4 generation
const v4 = [2, 4, 8, 16, 32, 48, 64];
const v4e = [2, 4, 8, 16, 20, 32, 48, 64];
const ssdV4 = scale(1600, 24, 80000, 1200);
const ssdV4d = scale(1600, 24, 80000, 1200, { iopsPer: 9500, mbpsPer: 125, cachePer: 25, maxIops: 304000, maxMBps: 4000 });
const v4common = { ...common, acus: 195, accel: true, gens: gen12, perCore: 2, where: 'wide' as Avail };
family({ ...v4common, family: 'standardDv4Family', premium: false, ephemeral: false, io: ssdV4, rows: v4.map((v) => [`D${v}_v4`, v, v * 4, dataDisks(v), 0, v3Nics(v)]) });
family({ ...v4common, family: 'standardDSv4Family', premium: true, ephemeral: false, edge: true, io: ssdV4, rows: v4.map((v) => [`D${v}s_v4`, v, v * 4, dataDisks(v), 0, v3Nics(v)]) });
family({ ...v4common, family: 'standardDDv4Family', premium: false, ephemeral: true, io: ssdV4d, rows: v4.map((v) => [`D${v}d_v4`, v, v * 4, dataDisks(v), Math.round(v * 37.5), v3Nics(v)]) });
family({ ...v4common, family: 'standardDDSv4Family', premium: true, ephemeral: true, edge: true, io: ssdV4d, rows: v4.map((v) => [`D${v}ds_v4`, v, v * 4, dataDisks(v), Math.round(v * 37.5), v3Nics(v)]) });
const ev4Mem = (v: number) => (v === 64 ? 504 : v === 20 ? 160 : v * 8);
family({ ...v4common, family: 'standardEv4Family', premium: false, ephemeral: false, io: ssdV4, rows: v4e.map((v) => [`E${v}_v4`, v, ev4Mem(v), dataDisks(v), 0, v3Nics(v)]) });
family({ ...v4common, family: 'standardESv4Family', premium: true, ephemeral: false, edge: true, io: ssdV4, rows: v4e.map((v) => [`E${v}s_v4`, v, ev4Mem(v), dataDisks(v), 0, v3Nics(v)]) });
family({ ...v4common, family: 'standardEDv4Family', premium: false, ephemeral: true, io: ssdV4d, rows: v4e.map((v) => [`E${v}d_v4`, v, ev4Mem(v), dataDisks(v), Math.round(v * 37.5), v3Nics(v)]) });
family({ ...v4common, family: 'standardEDSv4Family', premium: true, ephemeral: true, io: ssdV4d, rows: v4e.map((v) => [`E${v}ds_v4`, v, ev4Mem(v), dataDisks(v), Math.round(v * 37.5), v3Nics(v)]) });
// v5 generation
const v5 = [2, 4, 8, 16, 32, 48, 64, 96];
const v5e = [2, 4, 8, 16, 20, 32, 48, 64, 96, 104];
const v5a = [2, 4, 8, 16, 20, 32, 48, 64, 96];
const ssdV5 = scale(1875, 42.5, 80000, 2600);
const ssdV5d = scale(1875, 42.5, 80000, 2600, { iopsPer: 4750, mbpsPer: 62.5, cachePer: 37.5, maxIops: 300000, maxMBps: 5000 });
const v5Nics = (v: number) => (v <= 4 ? 2 : v <= 8 ? 4 : 8);
const v5common = { ...common, accel: true, gens: gen12, perCore: 2, where: 'wide' as Avail };
family({ ...v5common, acus: 195, family: 'standardDv5Family', premium: false, ephemeral: false, io: ssdV5, rows: v5.map((v) => [`D${v}_v5`, v, v * 4, dataDisks(v), 0, v5Nics(v)]) });
family({ ...v5common, acus: 195, family: 'standardDSv5Family', premium: true, ephemeral: false, edge: true, io: ssdV5, rows: v5.map((v) => [`D${v}s_v5`, v, v * 4, dataDisks(v), 0, v5Nics(v)]) });
family({ ...v5common, acus: 195, family: 'standardDDv5Family', premium: false, ephemeral: true, io: ssdV5d, rows: v5.map((v) => [`D${v}d_v5`, v, v * 4, dataDisks(v), Math.round(v * 37.5), v5Nics(v)]) });
family({ ...v5common, acus: 195, family: 'standardDDSv5Family', premium: true, ephemeral: true, edge: true, io: ssdV5d, rows: v5.map((v) => [`D${v}ds_v5`, v, v * 4, dataDisks(v), Math.round(v * 37.5), v5Nics(v)]) });
family({ ...v5common, acus: 230, family: 'standardDASv5Family', premium: true, ephemeral: false, where: 'common', io: scale(1875, 42.5, 80000, 1200), rows: v5.map((v) => [`D${v}as_v5`, v, v * 4, dataDisks(v), 0, v5Nics(v)]) });
family({ ...v5common, acus: 230, family: 'standardDADSv5Family', premium: true, ephemeral: true, where: 'common', edge: true, io: scale(1875, 42.5, 80000, 1200, { iopsPer: 4750, mbpsPer: 62.5, cachePer: 37.5, maxIops: 300000, maxMBps: 4000 }), rows: v5.map((v) => [`D${v}ads_v5`, v, v * 4, dataDisks(v), Math.round(v * 37.5), v5Nics(v)]) });
/** The 104-vCPU Ev5 sizes are the isolated `E104i*` sizes. */
const e104 = (v: number) => (v === 104 ? '104i' : String(v));
const ev5Mem = (v: number) => (v === 96 ? 672 : v === 104 ? 672 : v === 20 ? 160 : v * 8);
family({ ...v5common, acus: 195, family: 'standardEv5Family', premium: false, ephemeral: false, io: ssdV5, rows: v5e.map((v) => [`E${e104(v)}_v5`, v, ev5Mem(v), dataDisks(v), 0, v5Nics(v)]) });
family({ ...v5common, acus: 195, family: 'standardESv5Family', premium: true, ephemeral: false, edge: true, io: ssdV5, rows: v5e.map((v) => [`E${e104(v)}s_v5`, v, ev5Mem(v), dataDisks(v), 0, v5Nics(v)]) });
family({ ...v5common, acus: 195, family: 'standardEDv5Family', premium: false, ephemeral: true, io: ssdV5d, rows: v5e.map((v) => [`E${e104(v)}d_v5`, v, ev5Mem(v), dataDisks(v), Math.round(v * 37.5), v5Nics(v)]) });
family({ ...v5common, acus: 195, family: 'standardEDSv5Family', premium: true, ephemeral: true, io: ssdV5d, rows: v5e.map((v) => [`E${e104(v)}ds_v5`, v, ev5Mem(v), dataDisks(v), Math.round(v * 37.5), v5Nics(v)]) });
family({ ...v5common, acus: 230, family: 'standardEASv5Family', premium: true, ephemeral: false, where: 'common', io: scale(1875, 42.5, 80000, 1200), rows: v5a.map((v) => [`E${v}as_v5`, v, ev5Mem(v), dataDisks(v), 0, v5Nics(v)]) });
family({ ...v5common, acus: 230, family: 'standardEADSv5Family', premium: true, ephemeral: true, where: 'common', io: scale(1875, 42.5, 80000, 1200, { iopsPer: 4750, mbpsPer: 62.5, cachePer: 37.5, maxIops: 300000, maxMBps: 4000 }), rows: v5a.map((v) => [`E${v}ads_v5`, v, ev5Mem(v), dataDisks(v), Math.round(v * 37.5), v5Nics(v)]) });
// Fsv2 (compute optimized)
family({
  ...common, family: 'standardFSv2Family', acus: 195, premium: true, accel: true, gens: gen12, perCore: 2, ephemeral: true, where: 'all', edge: true,
  io: scale(1600, 23.5, 80000, 1100, { iopsPer: 2000, mbpsPer: 16, cachePer: 8, maxIops: 144000, maxMBps: 1152 }),
  rows: [2, 4, 8, 16, 32, 48, 64, 72].map((v) => [`F${v}s_v2`, v, v * 2, Math.min(v * 2, 32), v * 8, v3Nics(v)]),
});
// Lsv2 / Lsv3 (storage optimized)
const lRows = (suffix: string, temp: (v: number) => number): [string, number, number, number, number, number][] => [8, 16, 32, 48, 64, 80].map((v) => [`L${v}s_${suffix}`, v, v * 8, Math.min(v * 2, 32), temp(v), v <= 8 ? 2 : v <= 16 ? 4 : 8]);
family({ ...common, family: 'standardLSv2Family', acus: 150, premium: true, accel: true, gens: gen12, perCore: 2, ephemeral: false, where: 'wide', io: scale(1000, 20, 80000, 2000, { iopsPer: 1000, mbpsPer: 20, cachePer: 0, maxIops: 80000, maxMBps: 1600 }), rows: lRows('v2', (v) => v * 10) });
family({ ...common, family: 'standardLSv3Family', acus: 180, premium: true, accel: true, gens: gen12, perCore: 2, ephemeral: false, where: 'common', edge: true, io: scale(1600, 36, 80000, 2000, { iopsPer: 4750, mbpsPer: 62.5, cachePer: 0, maxIops: 300000, maxMBps: 5000 }), rows: lRows('v3', (v) => v * 10) });
// M-series (memory optimized, large)
family({
  ...common, family: 'standardMSFamily', acus: 160, premium: true, accel: true, gens: gen12, perCore: 2, ephemeral: true, where: 'mem', lowPri: false,
  io: scale(1250, 15, 80000, 1000, { iopsPer: 2500, mbpsPer: 25, cachePer: 25, maxIops: 160000, maxMBps: 1600 }),
  rows: [
    ['M8ms', 8, 218.75, 8, 256, 4], ['M16ms', 16, 437.5, 16, 512, 8], ['M32ts', 32, 192, 32, 1024, 8], ['M32ls', 32, 256, 32, 1024, 8], ['M32ms', 32, 875, 32, 1024, 8],
    ['M64s', 64, 1024, 64, 2048, 8], ['M64ls', 64, 512, 64, 2048, 8], ['M64ms', 64, 1792, 64, 2048, 8], ['M128s', 128, 2048, 64, 4096, 8], ['M128ms', 128, 3892, 64, 4096, 8],
    ['M64', 64, 1024, 64, 7168, 8], ['M64m', 64, 1792, 64, 7168, 8], ['M128', 128, 2048, 64, 14336, 8], ['M128m', 128, 3892, 64, 14336, 8],
  ],
});
family({
  ...common, family: 'standardMSv2Family', acus: 160, premium: true, accel: true, gens: 'V2', perCore: 2, ephemeral: false, where: ['eastus', 'eastus2', 'westus2', 'westeurope', 'northeurope', 'southeastasia'], lowPri: false,
  io: scale(625, 8, 80000, 1000),
  rows: [['M208ms_v2', 208, 5700, 64, 4096, 8], ['M208s_v2', 208, 2850, 64, 4096, 8], ['M416ms_v2', 416, 11400, 64, 8192, 8], ['M416s_v2', 416, 5700, 64, 8192, 8]],
});
// GPU
family({ ...common, family: 'standardNCSv3Family', acus: undefined, premium: true, accel: false, gens: gen12, perCore: 1, ephemeral: true, where: 'gpu', io: scale(3333, 33, 80000, 800), rows: [['NC6s_v3', 6, 112, 12, 736, 4], ['NC12s_v3', 12, 224, 24, 1474, 8], ['NC24s_v3', 24, 448, 32, 2948, 8], ['NC24rs_v3', 24, 448, 32, 2948, 8]] });
family({ ...common, family: 'standardNCASv3_T4Family', acus: undefined, premium: true, accel: true, gens: gen12, perCore: 1, ephemeral: true, where: 'gpu', io: scale(1000, 40, 80000, 2000), rows: [['NC4as_T4_v3', 4, 28, 8, 180, 2], ['NC8as_T4_v3', 8, 56, 16, 360, 4], ['NC16as_T4_v3', 16, 110, 32, 360, 8], ['NC64as_T4_v3', 64, 440, 32, 2880, 8]] });
family({ ...common, family: 'standardNDSv2Family', acus: undefined, premium: true, accel: true, gens: 'V1,V2', perCore: 2, ephemeral: true, where: ['eastus', 'westus2', 'westeurope', 'southcentralus'], lowPri: false, rdma: true, io: scale(1000, 10, 80000, 400), rows: [['ND40rs_v2', 40, 672, 32, 2948, 8]] });
family({ ...common, family: 'standardNVSv3Family', acus: undefined, premium: true, accel: true, gens: gen12, perCore: 2, ephemeral: true, where: 'gpu', io: scale(1000, 16, 80000, 768), rows: [['NV12s_v3', 12, 112, 12, 320, 4], ['NV24s_v3', 24, 224, 24, 640, 8], ['NV48s_v3', 48, 448, 32, 1280, 8]] });
family({
  ...common, family: 'StandardNVADSA10v5Family', acus: undefined, premium: true, accel: true, gens: 'V2', perCore: 2, ephemeral: true, where: ['eastus', 'westus2', 'southcentralus', 'westeurope', 'northeurope', 'uksouth', 'southeastasia'], edge: true,
  io: scale(640, 16, 80000, 960),
  rows: [['NV6ads_A10_v5', 6, 55, 4, 180, 2], ['NV12ads_A10_v5', 12, 110, 4, 360, 2], ['NV18ads_A10_v5', 18, 220, 8, 720, 4], ['NV36ads_A10_v5', 36, 440, 16, 1440, 4], ['NV36adms_A10_v5', 36, 880, 32, 2880, 8], ['NV72ads_A10_v5', 72, 880, 32, 2880, 8]],
});
const gpuCount: Record<string, number> = {
  NC6s_v3: 1, NC12s_v3: 2, NC24s_v3: 4, NC24rs_v3: 4, NC4as_T4_v3: 1, NC8as_T4_v3: 1, NC16as_T4_v3: 1, NC64as_T4_v3: 4, ND40rs_v2: 8, NV12s_v3: 1, NV24s_v3: 2, NV48s_v3: 4,
  NV6ads_A10_v5: 1, NV12ads_A10_v5: 1, NV18ads_A10_v5: 1, NV36ads_A10_v5: 1, NV36adms_A10_v5: 1, NV72ads_A10_v5: 2,
};
// HPC
family({
  ...common, family: 'standardHBrsv3Family', acus: undefined, premium: true, accel: true, gens: gen12, perCore: 1, ephemeral: true, where: 'hpc', rdma: true, lowPri: false,
  io: scale(200, 2, 80000, 2000),
  rows: [['HB120rs_v3', 120, 448, 32, 480, 8], ['HB120-96rs_v3', 120, 448, 32, 480, 8, 96], ['HB120-64rs_v3', 120, 448, 32, 480, 8, 64], ['HB120-32rs_v3', 120, 448, 32, 480, 8, 32], ['HB120-16rs_v3', 120, 448, 32, 480, 8, 16]],
});
family({ ...common, family: 'standardHCSFamily', acus: undefined, premium: true, accel: true, gens: gen12, perCore: 1, ephemeral: true, where: 'hpc', rdma: true, lowPri: false, io: scale(1000, 20, 80000, 1000), rows: [['HC44rs', 44, 352, 4, 700, 8]] });
for (const vm of vms) {
  if (gpuCount[vm.size]) vm.gpus = gpuCount[vm.size];
  // The "r" sizes carry the InfiniBand (RDMA) interface.
  vm.rdma = /^[A-Z]+\d+(-\d+)?r/.test(vm.size);
}

function vmCapabilities(vm: Vm): Cap[] {
  const caps: Cap[] = [
    cap('MaxResourceVolumeMB', vm.temp * 1024),
    cap('OSVhdSizeMB', 1047552),
    cap('vCPUs', vm.vcpus),
    cap('MemoryPreservingMaintenanceSupported', !vm.gpus && vm.family !== 'standardMSv2Family'),
    cap('HyperVGenerations', vm.gens),
    cap('MemoryGB', vm.mem),
    cap('MaxDataDiskCount', vm.disks),
    cap('CpuArchitectureType', vm.arch),
    cap('LowPriorityCapable', vm.lowPri),
    cap('PremiumIO', vm.premium),
    cap('VMDeploymentTypes', 'IaaS'),
    cap('vCPUsAvailable', vm.avail ?? vm.vcpus),
  ];
  if (vm.acus !== undefined) caps.push(cap('ACUs', vm.acus));
  if (vm.gpus) caps.push(cap('GPUs', vm.gpus));
  caps.push(cap('vCPUsPerCore', vm.perCore));
  if (vm.cachedIops !== undefined) {
    caps.push(cap('CombinedTempDiskAndCachedIOPS', vm.cachedIops));
    caps.push(cap('CombinedTempDiskAndCachedReadBytesPerSecond', Math.round(vm.cachedMBps! * MiB)));
    caps.push(cap('CombinedTempDiskAndCachedWriteBytesPerSecond', Math.round(vm.cachedMBps! * MiB)));
    if (vm.cacheGiB) caps.push(cap('CachedDiskBytes', vm.cacheGiB * 1024 * MiB));
  }
  if (vm.uncIops) caps.push(cap('UncachedDiskIOPS', vm.uncIops));
  if (vm.uncMBps) caps.push(cap('UncachedDiskBytesPerSecond', Math.round(vm.uncMBps * MiB)));
  caps.push(
    cap('EphemeralOSDiskSupported', vm.ephemeral),
    cap('EncryptionAtHostSupported', vm.encHost),
    cap('CapacityReservationSupported', vm.family !== 'standardBSFamily' && vm.family !== 'standardAv2Family'),
    cap('AcceleratedNetworkingEnabled', vm.accel),
    cap('RdmaEnabled', vm.rdma),
    cap('MaxNetworkInterfaces', vm.nics),
  );
  return caps;
}

// ---------------------------------------------------------------- records

/** Zones of a SKU in a zone region: all three, or two for some scarce sizes (stable per SKU and region). */
function zonesFor(name: string, loc: string, scarce: boolean): string[] {
  const all = ['1', '2', '3'];
  const x = h('zones', name, loc);
  const zones = scarce && x % 3 === 0 ? all.filter((z) => z !== String(((x >>> 4) % 3) + 1)) : all;
  // The live service lists zones in no particular order; keep a stable rotation.
  const r = x % zones.length;
  return [...zones.slice(r), ...zones.slice(0, r)];
}

/** Restrictions for a SKU in a location (a few percent of records; stable). */
function restrictionsFor(name: string, loc: string, zones: string[], quotaLimited: boolean): Restriction[] {
  const x = h('restrict', name, loc);
  if (quotaLimited && x % 4 === 0) return [{ type: 'Location', values: [loc], restrictionInfo: { locations: [loc] }, reasonCode: 'QuotaId' }];
  if (x % 41 === 0) return [{ type: 'Location', values: [loc], restrictionInfo: { locations: [loc] }, reasonCode: 'NotAvailableForSubscription' }];
  if (zones.length && x % 23 === 1) {
    const z = zones.filter((_, i) => (x >>> 8) % zones.length === i);
    return [{ type: 'Zone', values: [loc], restrictionInfo: { locations: [loc], zones: z }, reasonCode: 'NotAvailableForSubscription' }];
  }
  if (zones.length && quotaLimited && x % 7 === 3) return [{ type: 'Zone', values: [loc], restrictionInfo: { locations: [loc], zones: [...zones].sort() }, reasonCode: 'QuotaId' }];
  return [];
}

const out: Sku[] = [];
const vmRegionSets = new Map<string, Set<string>>();
for (const vm of vms) {
  const name = `Standard_${vm.size}`;
  const caps = vmCapabilities(vm);
  const scarce = !!vm.gpus || vm.rdma || vm.family.startsWith('standardMS') || vm.family.startsWith('standardL');
  const quotaLimited = scarce || vm.family === 'standardMSv2Family';
  const here = new Set(regionsFor(vm.where));
  vmRegionSets.set(name, here);
  const edgeParents = vm.edge ? Object.keys(edgeZones) : [];
  for (const r of regions) {
    const inRegion = here.has(r.name);
    const inEdge = edgeParents.includes(r.name) && h('edge', name, r.name) % 3 !== 0;
    if (!inRegion && !inEdge) continue;
    const locationInfo: LocationInfo[] = [];
    let zones: string[] = [];
    if (inRegion) {
      if (r.zones) {
        zones = zonesFor(name, r.name, scarce);
        const ultra = vm.premium && !vm.family.startsWith('standardBS');
        const ultraZones = ultra ? zones.filter((z) => h('ultra', r.name, z) % 4 !== 0) : [];
        locationInfo.push({ location: r.name, zones, zoneDetails: ultraZones.length ? [{ name: ultraZones, capabilities: [cap('UltraSSDAvailable', true)] }] : [] });
      } else {
        locationInfo.push({ location: r.name, zones: [], zoneDetails: [] });
      }
    }
    if (inEdge) locationInfo.push({ location: r.name, extendedLocations: edgeZones[r.name]!, type: 'EdgeZone' });
    out.push({
      resourceType: 'virtualMachines',
      name,
      tier: 'Standard',
      size: vm.size,
      family: vm.family,
      locations: [r.name],
      locationInfo,
      capabilities: caps,
      restrictions: inRegion ? restrictionsFor(name, r.name, zones, quotaLimited) : [],
    });
  }
}

// Disks: one record per disk size (the real catalog lists Premium_LRS once per P-tier).
const pSizes: [string, number, number, number][] = [
  ['P1', 4, 120, 25], ['P2', 8, 120, 25], ['P3', 16, 120, 25], ['P4', 32, 120, 25], ['P6', 64, 240, 50], ['P10', 128, 500, 100], ['P15', 256, 1100, 125], ['P20', 512, 2300, 150],
  ['P30', 1024, 5000, 200], ['P40', 2048, 7500, 250], ['P50', 4096, 7500, 250], ['P60', 8192, 16000, 500], ['P70', 16384, 18000, 750], ['P80', 32767, 20000, 900],
];
const eSizes: [string, number, number, number][] = [
  ['E1', 4, 500, 60], ['E2', 8, 500, 60], ['E3', 16, 500, 60], ['E4', 32, 500, 60], ['E6', 64, 500, 60], ['E10', 128, 500, 60], ['E15', 256, 500, 60], ['E20', 512, 500, 60],
  ['E30', 1024, 500, 60], ['E40', 2048, 500, 60], ['E50', 4096, 500, 60], ['E60', 8192, 2000, 400], ['E70', 16384, 4000, 600], ['E80', 32767, 6000, 750],
];
const sSizes: [string, number, number, number][] = [
  ['S4', 32, 500, 60], ['S6', 64, 500, 60], ['S10', 128, 500, 60], ['S15', 256, 500, 60], ['S20', 512, 500, 60], ['S30', 1024, 500, 60], ['S40', 2048, 500, 60],
  ['S50', 4096, 500, 60], ['S60', 8192, 1300, 300], ['S70', 16384, 2000, 500], ['S80', 32767, 2000, 500],
];
const maxShares = (gib: number) => (gib <= 256 ? 3 : gib <= 1024 ? 5 : 10);
function diskRecords(name: string, tier: string, sizes: [string, number, number, number][], where: (r: (typeof regions)[number]) => boolean, shares: boolean) {
  let prev = 0;
  for (const [size, gib, iops, mbps] of sizes) {
    const caps: Cap[] = [cap('MaxSizeGiB', gib), cap('MinSizeGiB', prev), cap('MaxIOps', iops), cap('MinIOps', iops), cap('MaxBandwidthMBps', mbps), cap('MinBandwidthMBps', mbps)];
    if (shares) caps.push(cap('MaxValueOfMaxShares', maxShares(gib)));
    prev = gib;
    for (const r of regions.filter(where)) {
      const inEdge = (name === 'Premium_LRS' || name === 'StandardSSD_LRS') && edgeZones[r.name] !== undefined;
      const locationInfo: LocationInfo[] = [{ location: r.name, zones: r.zones ? ['1', '2', '3'] : [], zoneDetails: [] }];
      if (inEdge) locationInfo.push({ location: r.name, extendedLocations: edgeZones[r.name]!, type: 'EdgeZone' });
      out.push({ resourceType: 'disks', name, tier, size, locations: [r.name], locationInfo, capabilities: caps, restrictions: [] });
    }
  }
}
diskRecords('Standard_LRS', 'Standard', sSizes, () => true, false);
diskRecords('Premium_LRS', 'Premium', pSizes, () => true, true);
diskRecords('StandardSSD_LRS', 'StandardSSD', eSizes, () => true, true);
diskRecords('Premium_ZRS', 'Premium', pSizes, (r) => r.zones && r.tier <= 2, true);
diskRecords('StandardSSD_ZRS', 'StandardSSD', eSizes, (r) => r.zones && r.tier <= 2, true);
// Ultra and Premium SSD v2: one record per region, the size range in the capabilities; zonal only.
for (const r of regions.filter((x) => x.zones && x.tier <= 2)) {
  const ultraZones = ['1', '2', '3'].filter((z) => h('ultra', r.name, z) % 4 !== 0);
  out.push({
    resourceType: 'disks', name: 'UltraSSD_LRS', tier: 'Ultra', size: 'Ultra', locations: [r.name],
    locationInfo: [{ location: r.name, zones: ultraZones, zoneDetails: [] }],
    capabilities: [cap('MaxSizeGiB', 65536), cap('MinSizeGiB', 4), cap('MaxIOpsReadWrite', 400000), cap('MinIOpsReadWrite', 100), cap('MaxBandwidthMBpsReadWrite', 10000), cap('MinBandwidthMBpsReadWrite', 1), cap('MaxIopsPerGiBReadWrite', 1000), cap('MaxValueOfMaxShares', 15)],
    restrictions: [],
  });
  out.push({
    resourceType: 'disks', name: 'PremiumV2_LRS', tier: 'Premium', size: 'PremiumV2', locations: [r.name],
    locationInfo: [{ location: r.name, zones: ['1', '2', '3'], zoneDetails: [] }],
    capabilities: [cap('MaxSizeGiB', 65536), cap('MinSizeGiB', 1), cap('MaxIOps', 80000), cap('MinIOps', 3000), cap('MaxBandwidthMBps', 1200), cap('MinBandwidthMBps', 125), cap('MaxIopsPerGiB', 500), cap('MaxValueOfMaxShares', 15)],
    restrictions: h('restrict', 'PremiumV2_LRS', r.name) % 5 === 0 ? [{ type: 'Zone', values: [r.name], restrictionInfo: { locations: [r.name], zones: ['3'] }, reasonCode: 'NotAvailableForSubscription' }] : [],
  });
}
// Snapshots
for (const [name, tier] of [['Standard_LRS', 'Standard'], ['Premium_LRS', 'Premium'], ['Standard_ZRS', 'Standard']] as const) {
  for (const r of regions) {
    if (name === 'Standard_ZRS' && !r.zones) continue;
    out.push({
      resourceType: 'snapshots', name, tier, locations: [r.name],
      locationInfo: [{ location: r.name, zones: [], zoneDetails: [] }],
      costs: [{ meterID: stableId('snapshot-meter', name, r.name), quantity: 1, extendedUnit: 'GB/Month' }],
      capabilities: [], restrictions: [],
    });
  }
}
// Availability sets: Classic (unmanaged disks) and Aligned (managed disks); fault domains per region.
const twoFaultDomains = new Set(['westcentralus', 'canadaeast', 'ukwest', 'japanwest', 'switzerlandnorth', 'koreacentral']);
for (const name of ['Classic', 'Aligned']) {
  for (const r of regions) {
    const fd = twoFaultDomains.has(r.name) ? 2 : 3;
    out.push({
      resourceType: 'availabilitySets', name, locations: [r.name],
      locationInfo: [{ location: r.name, zones: [], zoneDetails: [] }],
      capacity: { minimum: 1, maximum: fd, default: Math.min(2, fd), scaleType: 'Manual' },
      capabilities: [cap('MaximumPlatformFaultDomainCount', fd)], restrictions: [],
    });
  }
}
// Dedicated host groups and hosts.
for (const r of regions) {
  const fd = r.zones ? 1 : twoFaultDomains.has(r.name) ? 2 : 3;
  out.push({
    resourceType: 'hostGroups', name: 'Standard', tier: 'Standard', locations: [r.name],
    locationInfo: [{ location: r.name, zones: r.zones ? ['1', '2', '3'] : [], zoneDetails: [] }],
    apiVersions: ['2019-03-01', '2020-06-01', '2021-07-01'],
    capacity: { minimum: 1, maximum: r.zones ? 3 : fd, default: 1, scaleType: 'Manual' },
    capabilities: [cap('MaximumPlatformFaultDomainCount', r.zones ? 3 : fd), cap('SupportsAutomaticPlacement', true)], restrictions: [],
  });
}
const hostSkus: [string, string, number, number, Avail][] = [
  // name, VM family it hosts, cores, vCPUs (sellable), availability
  ['DSv3-Type1', 'standardDSv3Family', 40, 64, 'wide'], ['DSv3-Type2', 'standardDSv3Family', 32, 64, 'wide'], ['DSv3-Type3', 'standardDSv3Family', 40, 80, 'wide'], ['DSv3-Type4', 'standardDSv3Family', 64, 119, 'common'],
  ['ESv3-Type1', 'standardESv3Family', 40, 64, 'wide'], ['ESv3-Type2', 'standardESv3Family', 32, 64, 'wide'], ['ESv3-Type3', 'standardESv3Family', 40, 80, 'wide'], ['ESv3-Type4', 'standardESv3Family', 64, 119, 'common'],
  ['DSv4-Type1', 'standardDSv4Family', 40, 80, 'wide'], ['DSv4-Type2', 'standardDSv4Family', 64, 119, 'common'], ['DDSv4-Type1', 'standardDDSv4Family', 40, 80, 'wide'], ['DDSv4-Type2', 'standardDDSv4Family', 64, 119, 'common'],
  ['ESv4-Type1', 'standardESv4Family', 40, 80, 'wide'], ['ESv4-Type2', 'standardESv4Family', 64, 119, 'common'], ['EDSv4-Type1', 'standardEDSv4Family', 40, 80, 'wide'], ['EDSv4-Type2', 'standardEDSv4Family', 64, 119, 'common'],
  ['DSv5-Type1', 'standardDSv5Family', 64, 119, 'wide'], ['DDSv5-Type1', 'standardDDSv5Family', 64, 119, 'wide'], ['DASv5-Type1', 'standardDASv5Family', 64, 112, 'common'], ['DADSv5-Type1', 'standardDADSv5Family', 64, 112, 'common'],
  ['ESv5-Type1', 'standardESv5Family', 64, 119, 'wide'], ['EDSv5-Type1', 'standardEDSv5Family', 64, 119, 'wide'], ['EASv5-Type1', 'standardEASv5Family', 64, 112, 'common'], ['EADSv5-Type1', 'standardEADSv5Family', 64, 112, 'common'],
  ['FSv2-Type2', 'standardFSv2Family', 36, 72, 'wide'], ['FSv2-Type3', 'standardFSv2Family', 40, 80, 'wide'], ['FSv2-Type4', 'standardFSv2Family', 64, 119, 'common'],
  ['LSv2-Type1', 'standardLSv2Family', 64, 80, 'common'], ['LSv3-Type1', 'standardLSv3Family', 64, 80, 'common'],
  ['MS-Type1', 'standardMSFamily', 64, 128, 'mem'], ['MSm-Type1', 'standardMSFamily', 64, 128, 'mem'], ['MSmv2-Type1', 'standardMSv2Family', 224, 416, ['eastus', 'westus2', 'westeurope']],
];
for (const [name, fam, cores, vcpus, where] of hostSkus) {
  for (const loc of regionsFor(where)) {
    const r = regions.find((x) => x.name === loc)!;
    out.push({
      resourceType: 'hostGroups/hosts', name, family: fam, kind: 'DedicatedHost', locations: [loc],
      locationInfo: [{ location: loc, zones: r.zones ? zonesFor(name, loc, false) : [], zoneDetails: [] }],
      costs: [{ meterID: stableId('host-meter', name, loc), quantity: 1, extendedUnit: 'Hours' }],
      capabilities: [cap('vCPUs', vcpus), cap('vCPUsPerCore', 2), cap('Cores', cores), cap('SupportsAutoplacement', true)],
      restrictions: restrictionsFor(name, loc, [], fam.startsWith('standardMS')),
    });
  }
}

// ---------------------------------------------------------------- checks and output

const names = new Set(out.map((s) => s.name));
const checks: [string, boolean][] = [
  ['>= 300 distinct SKU names', names.size >= 300],
  ['>= 20 regions', regions.length >= 20],
  ['Location/QuotaId', out.some((s) => s.restrictions.some((x) => x.type === 'Location' && x.reasonCode === 'QuotaId'))],
  ['Location/NotAvailableForSubscription', out.some((s) => s.restrictions.some((x) => x.type === 'Location' && x.reasonCode === 'NotAvailableForSubscription'))],
  ['Zone/QuotaId', out.some((s) => s.restrictions.some((x) => x.type === 'Zone' && x.reasonCode === 'QuotaId'))],
  ['Zone/NotAvailableForSubscription', out.some((s) => s.restrictions.some((x) => x.type === 'Zone' && x.reasonCode === 'NotAvailableForSubscription'))],
  ['EdgeZone-only records', out.some((s) => s.locationInfo.every((l) => l.type === 'EdgeZone'))],
];
for (const [what, ok] of checks) if (!ok) throw new Error(`catalog check failed: ${what}`);

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'services', 'compute', 'data', 'skus.json');
fs.writeFileSync(file, '[\n' + out.map((s) => JSON.stringify(s)).join(',\n') + '\n]\n');
const byType = new Map<string, number>();
for (const s of out) byType.set(s.resourceType, (byType.get(s.resourceType) ?? 0) + 1);
console.log(`${out.length} records, ${names.size} distinct SKU names, ${regions.length} regions -> ${path.relative(process.cwd(), file)}`);
for (const [t, n] of byType) console.log(`  ${t}: ${n}`);
