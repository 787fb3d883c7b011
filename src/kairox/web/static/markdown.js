// Replies as Markdown: markdown-it with raw HTML off (tags stay text), images off (a reply
// cannot load anything), links only to http(s)/mailto (markdown-it drops javascript: and data:),
// and code blocks highlighted by highlight.js. Both libraries are vendored under /static/vendor.
import "/static/vendor/markdown-it.min.js";
import hljs from "/static/vendor/highlight.min.js";

const SAFE_LINK = /^(https?:|mailto:)/i;

const md = globalThis.markdownit({
  html: false,
  linkify: true,
  typographer: false,
  highlight(code, lang) {
    if (lang && hljs.getLanguage(lang)) {
      try {
        return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
      } catch {
        // fall through: markdown-it escapes the plain code
      }
    }
    return "";
  },
});
md.disable("image");
const validate = md.validateLink.bind(md);
md.validateLink = (url) => validate(url) && SAFE_LINK.test(url.trim());
const defaultLink = md.renderer.rules.link_open || ((tokens, idx, options, env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet("rel", "noopener noreferrer nofollow");
  tokens[idx].attrSet("target", "_blank");
  return defaultLink(tokens, idx, options, env, self);
};

// Render `text` as Markdown into `node` (the reply's text box); called again as deltas arrive.
export function renderMarkdown(node, text) {
  node.classList.add("md");
  node.dataset.raw = text;
  node.innerHTML = md.render(text); // markdown-it output: HTML escaped, no raw tags
}
