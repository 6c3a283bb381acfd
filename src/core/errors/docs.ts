/**
 * The error tables of the documentation, generated from the catalogue so they cannot drift
 * (`docs/errors.md`; written by `scripts/gen-error-docs.ts`, checked by a test).
 */
import { registry } from './catalogue.ts';
import './index.ts';

const titles: Record<string, string> = {
  oauth: 'Identity provider — OAuth 2.0 error JSON',
  arm: 'Resource manager — `ErrorResponse`',
  datashare: 'Data share — `DataShareError`',
  analytics: 'Analytics — the analytics error body',
  platform: 'Data platform — `ErrorResponse`',
  mail: 'Mail — the mail error',
  wopi: 'Document host — status and headers, no body',
  control: 'Control plane — problem+json',
};

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * Renders every registered catalogue as Markdown.
 * @returns the whole `docs/errors.md` text.
 */
export function errorDocs(): string {
  const out = [
    '# Errors',
    '',
    'Generated from `src/core/errors/` by `npx tsx scripts/gen-error-docs.ts`; do not edit by hand.',
    'Every error a route raises is one of these, rendered in its family\'s envelope. `{name}` in a',
    'message is filled per occurrence; `{message}` alone is a message computed by the rules.',
    '',
  ];
  const families = [...Object.keys(titles).filter((f) => registry.has(f as never)), ...[...registry.keys()].filter((f) => !(f in titles))];
  for (const family of families) {
    const entries = registry.get(family as never)!;
    out.push(`## ${titles[family] ?? family}`, '', '| name | status | code | message | when |', '|---|---|---|---|---|');
    for (const [name, e] of Object.entries(entries)) {
      const headers = e.headers ? ` (headers: ${Object.keys(e.headers).join(', ')})` : '';
      out.push(`| \`${name}\` | ${e.status} | \`${e.code}\` | ${cell(e.message)} | ${cell((e.when ?? '') + headers)} |`);
    }
    out.push('');
  }
  return out.join('\n');
}
