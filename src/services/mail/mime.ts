/**
 * A MIME message's text (an `.eml` file, or the decoded base64 of a MIME create body) as the
 * message fields the area takes: `subject`, `body` (text or html by the top Content-Type),
 * `toRecipients`, `ccRecipients`, custom `x-` headers as `internetMessageHeaders`; and the
 * headers themselves (lower-case names, folded lines joined) for callers that take more
 * (`From`, `Date`, `Message-ID`). Simple single-part messages: a multipart body is kept as text.
 */

/** An address header (`"Name" <a@b>, c@d`) as recipients. */
export function mimeAddresses(v: string | undefined): { emailAddress: { address: string; name: string } }[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const m = /^(?:"?([^"<]*)"?\s*)?<([^>]+)>$/.exec(s);
      return { emailAddress: { address: m ? m[2]! : s, name: m?.[1]?.trim() ?? '' } };
    });
}

/** Parses MIME text; undefined when it has no header/body separator. */
export function parseMime(mime: string): { input: Record<string, unknown>; headers: Map<string, string> } | undefined {
  const split = mime.search(/\r?\n\r?\n/);
  if (split < 0) return undefined;
  const headers = new Map<string, string>();
  for (const line of mime.slice(0, split).replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  const isHtml = /text\/html/i.test(headers.get('content-type') ?? '');
  const input: Record<string, unknown> = { subject: headers.get('subject') ?? '', body: { contentType: isHtml ? 'html' : 'text', content: mime.slice(split).trim() }, toRecipients: mimeAddresses(headers.get('to')), ccRecipients: mimeAddresses(headers.get('cc')) };
  const custom = [...headers].filter(([k]) => k.startsWith('x-')).map(([name, value]) => ({ name, value }));
  if (custom.length) input.internetMessageHeaders = custom;
  return { input, headers };
}
