/**
 * Rebuilds `docs/coverage.md` from `docs/coverage/<area>.md`, and `docs/deviations.md` from
 * `docs/deviations/<area>.md`, in the areas' registration order. Run: `npx tsx scripts/merge-docs.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';

const order = ['core', 'identity', 'compute', 'authorization', 'billing', 'datashare', 'automation', 'resources', 'analytics', 'platform', 'wopi', 'mail', 'mailsync', 'directory'];
const titles: Record<string, string> = {
  core: 'Core',
  identity: 'Identity provider',
  compute: 'Resource manager: gateway and compute SKUs (spec: resource-manager §4.3)',
  authorization: 'Resource manager: role management policies (spec: resource-manager §4.1, §4.2)',
  billing: 'Resource manager: invoice transactions (spec: resource-manager §4.4)',
  datashare: 'Resource manager: share synchronizations (spec: resource-manager §4.5)',
  automation: 'Resource manager: automation webhooks (spec: resource-manager §4.6)',
  resources: 'Resource manager: subscriptions, providers, resource groups, resources and tags (issue 27; reference resource-manager-base)',
  analytics: 'Analytics: admin dataflows (spec: analytics §4.1)',
  platform: 'Data platform: eventstream creation and long-running operations (spec: analytics §4.2)',
  wopi: 'Document host: bootstrapper (spec: analytics §4.4)',
  mail: 'Mail: mailbox message resource (spec: analytics §4.3, §6)',
  mailsync: 'Mail: change notifications (spec: analytics §6)',
  directory: 'Directory: users, groups, applications, service principals (issue 27 items 6–8; the public v1.0 directory resources)',
};

function sorted(dir: string): string[] {
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.md')) : [];
  const rank = (f: string) => {
    const i = order.indexOf(f.replace(/\.md$/, ''));
    return i < 0 ? order.length : i;
  };
  return files.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function section(file: string, dir: string): string {
  const area = file.replace(/\.md$/, '');
  let text = fs.readFileSync(path.join(dir, file), 'utf8').trim();
  text = text.replace(/^#{1,3} .*\n+/, '');
  return `### ${titles[area] ?? area}\n\n${text}\n`;
}

const root = path.resolve(import.meta.dirname, '..');
const covDir = path.join(root, 'docs/coverage');
const devDir = path.join(root, 'docs/deviations');

const coverage = sorted(covDir).map((f) => section(f, covDir)).join('\n');
fs.writeFileSync(
  path.join(root, 'docs/coverage.md'),
  `# API coverage\n\nEvery operation of the specification and what the real services have around it, with its state and its tests. One section per area (sources: \`docs/coverage/<area>.md\`; rebuild with \`npx tsx scripts/merge-docs.ts\`).\n\n${coverage}`,
);

const deviations = sorted(devDir).map((f) => section(f, devDir)).join('\n');
fs.writeFileSync(
  path.join(root, 'docs/deviations.md'),
  `# Deviations and choices\n\nWhere the specification and the reference are silent, what Stratus chose; and every deliberate departure from them. One section per area (sources: \`docs/deviations/<area>.md\`).\n\n${deviations}`,
);
console.log(`docs/coverage.md: ${sorted(covDir).length} areas; docs/deviations.md: ${sorted(devDir).length} areas`);
