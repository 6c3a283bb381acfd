/**
 * Safe rendering of a message's HTML body in the console, with `sanitize-html`: an allow-list
 * of formatting elements and attributes; no scripts, styles sheets, frames, forms or event
 * handlers; remote content blocked — an `img` keeps its source only for `data:` and `cid:`
 * (a remote one becomes an "[image blocked]" note), `srcset`, `background` and inline
 * `style` attributes are dropped (so no `url()`), and links lose their target (the address
 * is shown as a tooltip, not followed). The page's Content-Security-Policy backs this up.
 */
import sanitizeHtml from 'sanitize-html';

const options: sanitizeHtml.IOptions = {
  allowedTags: [
    'a', 'abbr', 'b', 'blockquote', 'br', 'caption', 'code', 'col', 'colgroup', 'dd', 'del', 'div', 'dl', 'dt', 'em', 'font',
    'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'img', 'ins', 'kbd', 'li', 'mark', 'ol', 'p', 'pre', 'q', 's', 'small', 'span',
    'strike', 'strong', 'sub', 'sup', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'u', 'ul',
  ],
  allowedAttributes: {
    a: ['title'],
    span: ['title'],
    img: ['src', 'alt', 'width', 'height', 'title'],
    td: ['colspan', 'rowspan', 'align'],
    th: ['colspan', 'rowspan', 'align', 'scope'],
    '*': ['dir', 'lang'],
  },
  allowedSchemes: ['data', 'cid'],
  allowedSchemesByTag: { img: ['data', 'cid'] },
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'title', 'head', 'iframe', 'object', 'embed', 'template'],
  transformTags: {
    a: (_tagName, attribs): sanitizeHtml.Tag => {
      const out: sanitizeHtml.Attributes = {};
      if (attribs.href) out.title = `Link (not followed): ${attribs.href}`;
      return { tagName: 'a', attribs: out };
    },
    img: (_tagName, attribs): sanitizeHtml.Tag => {
      const src = (attribs.src ?? '').trim();
      if (/^(data:image\/|cid:)/i.test(src)) {
        const out: sanitizeHtml.Attributes = { src, alt: attribs.alt ?? '' };
        if (attribs.width) out.width = attribs.width;
        if (attribs.height) out.height = attribs.height;
        return { tagName: 'img', attribs: out };
      }
      return { tagName: 'span', attribs: { title: src ? `Remote image blocked: ${src}` : 'Image blocked' }, text: '[image blocked]' };
    },
  },
};

/** The sanitised HTML of a message body (safe to embed in a console page). */
export function sanitizeMailHtml(input: string): string {
  return sanitizeHtml(input, options);
}
