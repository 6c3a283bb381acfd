/**
 * The locations Stratus lists for every subscription (`GET /subscriptions/{id}/locations`,
 * reference resource-manager-base §6) and accepts for resource groups: every location of the
 * compute SKU catalog and of the demo data (28 regions), with the published metadata shape
 * (region type and category, geography, coordinates, paired region).
 */

/** One region. */
export interface Region {
  name: string;
  displayName: string;
  geography: string;
  geographyGroup: string;
  physicalLocation: string;
  latitude: string;
  longitude: string;
  paired: string;
}

/** The regions, in the order listed. */
export const regions: readonly Region[] = [
  { name: 'eastus', displayName: 'East US', geography: 'United States', geographyGroup: 'US', physicalLocation: 'Virginia', latitude: '37.3719', longitude: '-79.8164', paired: 'westus' },
  { name: 'eastus2', displayName: 'East US 2', geography: 'United States', geographyGroup: 'US', physicalLocation: 'Virginia', latitude: '36.6681', longitude: '-78.3889', paired: 'centralus' },
  { name: 'centralus', displayName: 'Central US', geography: 'United States', geographyGroup: 'US', physicalLocation: 'Iowa', latitude: '41.5908', longitude: '-93.6208', paired: 'eastus2' },
  { name: 'westus', displayName: 'West US', geography: 'United States', geographyGroup: 'US', physicalLocation: 'California', latitude: '37.783', longitude: '-122.417', paired: 'eastus' },
  { name: 'westus2', displayName: 'West US 2', geography: 'United States', geographyGroup: 'US', physicalLocation: 'Washington', latitude: '47.233', longitude: '-119.852', paired: 'westcentralus' },
  { name: 'westcentralus', displayName: 'West Central US', geography: 'United States', geographyGroup: 'US', physicalLocation: 'Wyoming', latitude: '40.89', longitude: '-110.234', paired: 'westus2' },
  { name: 'westus3', displayName: 'West US 3', geography: 'United States', geographyGroup: 'US', physicalLocation: 'Phoenix', latitude: '33.448376', longitude: '-112.074036', paired: 'eastus' },
  { name: 'northcentralus', displayName: 'North Central US', geography: 'United States', geographyGroup: 'US', physicalLocation: 'Illinois', latitude: '41.8819', longitude: '-87.6278', paired: 'southcentralus' },
  { name: 'southcentralus', displayName: 'South Central US', geography: 'United States', geographyGroup: 'US', physicalLocation: 'Texas', latitude: '29.4167', longitude: '-98.5', paired: 'northcentralus' },
  { name: 'canadacentral', displayName: 'Canada Central', geography: 'Canada', geographyGroup: 'Canada', physicalLocation: 'Toronto', latitude: '43.653', longitude: '-79.383', paired: 'canadaeast' },
  { name: 'canadaeast', displayName: 'Canada East', geography: 'Canada', geographyGroup: 'Canada', physicalLocation: 'Quebec', latitude: '46.817', longitude: '-71.217', paired: 'canadacentral' },
  { name: 'brazilsouth', displayName: 'Brazil South', geography: 'Brazil', geographyGroup: 'South America', physicalLocation: 'Sao Paulo State', latitude: '-23.55', longitude: '-46.633', paired: 'southcentralus' },
  { name: 'northeurope', displayName: 'North Europe', geography: 'Europe', geographyGroup: 'Europe', physicalLocation: 'Ireland', latitude: '53.3478', longitude: '-6.2597', paired: 'westeurope' },
  { name: 'westeurope', displayName: 'West Europe', geography: 'Europe', geographyGroup: 'Europe', physicalLocation: 'Netherlands', latitude: '52.3667', longitude: '4.9', paired: 'northeurope' },
  { name: 'uksouth', displayName: 'UK South', geography: 'United Kingdom', geographyGroup: 'Europe', physicalLocation: 'London', latitude: '50.941', longitude: '-0.799', paired: 'ukwest' },
  { name: 'ukwest', displayName: 'UK West', geography: 'United Kingdom', geographyGroup: 'Europe', physicalLocation: 'Cardiff', latitude: '53.427', longitude: '-3.084', paired: 'uksouth' },
  { name: 'francecentral', displayName: 'France Central', geography: 'France', geographyGroup: 'Europe', physicalLocation: 'Paris', latitude: '46.3772', longitude: '2.373', paired: 'francesouth' },
  { name: 'germanywestcentral', displayName: 'Germany West Central', geography: 'Germany', geographyGroup: 'Europe', physicalLocation: 'Frankfurt', latitude: '50.110924', longitude: '8.682127', paired: 'germanynorth' },
  { name: 'swedencentral', displayName: 'Sweden Central', geography: 'Sweden', geographyGroup: 'Europe', physicalLocation: 'Gävle', latitude: '60.67488', longitude: '17.14127', paired: 'swedensouth' },
  { name: 'switzerlandnorth', displayName: 'Switzerland North', geography: 'Switzerland', geographyGroup: 'Europe', physicalLocation: 'Zurich', latitude: '47.451542', longitude: '8.564572', paired: 'switzerlandwest' },
  { name: 'southeastasia', displayName: 'Southeast Asia', geography: 'Asia Pacific', geographyGroup: 'Asia Pacific', physicalLocation: 'Singapore', latitude: '1.283', longitude: '103.833', paired: 'eastasia' },
  { name: 'eastasia', displayName: 'East Asia', geography: 'Asia Pacific', geographyGroup: 'Asia Pacific', physicalLocation: 'Hong Kong', latitude: '22.267', longitude: '114.188', paired: 'southeastasia' },
  { name: 'japaneast', displayName: 'Japan East', geography: 'Japan', geographyGroup: 'Asia Pacific', physicalLocation: 'Tokyo, Saitama', latitude: '35.68', longitude: '139.77', paired: 'japanwest' },
  { name: 'japanwest', displayName: 'Japan West', geography: 'Japan', geographyGroup: 'Asia Pacific', physicalLocation: 'Osaka', latitude: '34.6939', longitude: '135.5022', paired: 'japaneast' },
  { name: 'centralindia', displayName: 'Central India', geography: 'India', geographyGroup: 'Asia Pacific', physicalLocation: 'Pune', latitude: '18.5822', longitude: '73.9197', paired: 'southindia' },
  { name: 'koreacentral', displayName: 'Korea Central', geography: 'Korea', geographyGroup: 'Asia Pacific', physicalLocation: 'Seoul', latitude: '37.5665', longitude: '126.978', paired: 'koreasouth' },
  { name: 'australiaeast', displayName: 'Australia East', geography: 'Australia', geographyGroup: 'Asia Pacific', physicalLocation: 'New South Wales', latitude: '-33.86', longitude: '151.2094', paired: 'australiasoutheast' },
  { name: 'australiasoutheast', displayName: 'Australia Southeast', geography: 'Australia', geographyGroup: 'Asia Pacific', physicalLocation: 'Victoria', latitude: '-37.8136', longitude: '144.9631', paired: 'australiaeast' },
];

const byName = new Map(regions.map((r) => [r.name, r]));

/** The region a location names (`eastus`, `East US`, case and spaces ignored), or undefined. */
export function regionOf(location: string): Region | undefined {
  return byName.get(location.toLowerCase().replace(/\s+/g, ''));
}

/** The `Location` resource of a region in a subscription (v2022-12-01 shape). */
export function locationBody(subscriptionId: string, r: Region): Record<string, unknown> {
  const base = `/subscriptions/${subscriptionId}/locations`;
  return {
    id: `${base}/${r.name}`,
    name: r.name,
    type: 'Region',
    displayName: r.displayName,
    regionalDisplayName: `(${r.geographyGroup}) ${r.displayName}`,
    metadata: {
      regionType: 'Physical',
      regionCategory: 'Recommended',
      geography: r.geography,
      geographyGroup: r.geographyGroup,
      longitude: r.longitude,
      latitude: r.latitude,
      physicalLocation: r.physicalLocation,
      pairedRegion: [{ name: r.paired, id: `${base}/${r.paired}` }],
    },
  };
}
