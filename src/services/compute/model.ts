/**
 * The compute SKU record (spec: resource-manager §2.2 ResourceSku; reference §3), declared
 * once: the service serves it (`data/skus.json`) and `scripts/gen-skus.ts` generates it.
 */

/** A name/value capability of a SKU (or of a zone in `zoneDetails`). */
export interface ResourceSkuCapability {
  name: string;
  value: string;
}

/** A restriction of a SKU in a location or in some of its zones. */
export interface ResourceSkuRestriction {
  type: 'Location' | 'Zone';
  values: string[];
  restrictionInfo: { locations?: string[]; zones?: string[] };
  reasonCode: 'QuotaId' | 'NotAvailableForSubscription';
}

/** ResourceSkuLocationInfo (spec §2.2): a region entry (zones) or an extended-location entry (`type: EdgeZone`, no zones). */
export interface ResourceSkuLocationInfo {
  location: string;
  zones?: string[];
  zoneDetails?: { name: string[]; capabilities: ResourceSkuCapability[] }[];
  extendedLocations?: string[];
  type?: 'EdgeZone';
}

/** A ResourceSku record (spec §2.2) as shipped in `data/skus.json`: one per SKU and location. */
export interface ResourceSku {
  resourceType: string;
  name: string;
  tier?: string;
  size?: string;
  family?: string;
  kind?: string;
  capacity?: { minimum: number; maximum: number; default: number; scaleType: 'Automatic' | 'Manual' | 'None' };
  locations: string[];
  locationInfo: ResourceSkuLocationInfo[];
  apiVersions?: string[];
  costs?: { meterID: string; quantity: number; extendedUnit: string }[];
  capabilities: ResourceSkuCapability[];
  restrictions: ResourceSkuRestriction[];
}
