// ui/lib.js: DOM building, the API client and number formats shared by the
// pages.  Every string from the API (config text, messages, names, labels)
// is attacker-controlled: it only ever reaches the page as a text node or an
// attribute value set through the DOM, never as markup to parse, and links
// are built from encoded path segments under this origin.

const TOKEN_KEY = 'preflight.token';

// h('a', {href: '/x', class: 'y'}, 'text', child, [more]) -> element.
export function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

const SVG_NS = 'http://www.w3.org/2000/svg';

// The same for SVG elements.
export function s(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

function fill(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// Replace everything in el with children.
export function put(el, ...children) {
  el.replaceChildren();
  fill(el, {}, children);
  return el;
}

// A path segment for a link or an API call.
export const seg = encodeURIComponent;

// ---- the API ----------------------------------------------------------

// A 4xx or 5xx answer: its status and problem document (RFC 9457).
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem && problem.detail ? problem.detail : 'HTTP ' + status);
    this.status = status;
    this.problem = problem || {};
  }
}

// A 401: the server wants a token (or refused the one sent).
export class AuthError extends ApiError {}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// fetch() a /v1 route with the session's token.  opts: method, json (a
// body to send as JSON), text (answer as text).  Throws AuthError on 401,
// ApiError on any other failure.
export async function api(path, opts = {}) {
  const headers = {Accept: 'application/json'};
  const t = token();
  let body;
  if (t) headers.Authorization = 'Bearer ' + t;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  const r = await fetch(path, {
    method: opts.method || 'GET', headers, body,
    credentials: 'omit', cache: 'no-store', redirect: 'error',
  });
  if (!r.ok) {
    let problem = null;
    if ((r.headers.get('Content-Type') || '').includes('json')) {
      problem = await r.json().catch(() => null);
    }
    throw new (r.status === 401 ? AuthError : ApiError)(r.status, problem);
  }
  return opts.text ? r.text() : r.json();
}

// ---- formats ----------------------------------------------------------

export function gib(v) {
  return typeof v === 'number' ? v.toFixed(2) + ' GiB' : 'unknown';
}

export function num(v, digits = 0) {
  if (typeof v !== 'number') return '—';
  return v.toLocaleString('en-US', {maximumFractionDigits: digits});
}

export function tokensPerSecond(v) {
  if (typeof v !== 'number') return '—';
  if (v >= 1e6) return (v / 1e6).toFixed(2) + 'M tokens/s';
  if (v >= 1e4) return (v / 1e3).toFixed(1) + 'k tokens/s';
  return num(v, 0) + ' tokens/s';
}

export function seconds(v) {
  if (typeof v !== 'number') return '—';
  if (v >= 7200) return (v / 3600).toFixed(1) + ' h';
  if (v >= 120) return (v / 60).toFixed(1) + ' min';
  return v.toFixed(2) + ' s';
}

// "2026-12-02T12:02:51.873Z" -> "2026-12-02 12:02 UTC" (the filters are
// UTC too).
export function when(iso) {
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)/.exec(iso || '');
  return m ? m[1] + ' ' + m[2] + ' UTC' : String(iso || '');
}

export function timeEl(iso) {
  return h('time', {datetime: iso}, when(iso));
}

// "8 × h100-sxm" (and the nodes when more than one).
export function gpusText(ctx) {
  if (!ctx) return '—';
  let t = (ctx.gpus ?? '?') + ' × ' + (ctx.gpu ?? '?');
  if (ctx.nodes > 1) t += ' on ' + ctx.nodes + ' nodes';
  return t;
}

const SEVERITY_MARK = {error: '✖', warning: '▲', info: 'ℹ'};
const VERDICT_MARK = {pass: '✔', warn: '▲', fail: '✖'};

// A severity as a symbol and a word, never colour alone.
export function sevBadge(sev) {
  return h('span', {class: 'sev sev-' + sev},
    h('span', {'aria-hidden': 'true'}, SEVERITY_MARK[sev] || '•'), ' ', sev);
}

export function verdictBadge(v) {
  return h('span', {class: 'verdict verdict-' + v, dataset: {verdict: v}},
    h('span', {'aria-hidden': 'true'}, VERDICT_MARK[v] || '•'), ' ', v);
}

// A rule id as a link to its page.
export function ruleLink(id) {
  return h('a', {href: '/rules/' + seg(id), class: 'rule'}, id);
}

export function checkHref(id) {
  return '/checks/' + seg(id);
}

export function historyHref(name) {
  return '/configs/' + seg(name);
}

// ---- YAML for suggestions --------------------------------------------

const PLAIN = /^[A-Za-z_][A-Za-z0-9_./-]*$/;
const RESERVED = /^(true|false|yes|no|on|off|y|n|null|~)$/i;

function yamlScalar(v) {
  if (v === null) return 'null';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  if (typeof v === 'string') {
    return PLAIN.test(v) && !RESERVED.test(v) ? v : JSON.stringify(v);
  }
  return JSON.stringify(v);   // a list or mapping in flow style
}

// {"a": 1, "b": {"c": true}} -> "a: 1\nb:\n  c: true\n"
export function yamlSnippet(obj, indent = '') {
  let out = '';
  for (const [k, v] of Object.entries(obj || {})) {
    const key = PLAIN.test(k) ? k : JSON.stringify(k);
    if (v && typeof v === 'object' && !Array.isArray(v) &&
        Object.keys(v).length > 0) {
      out += indent + key + ':\n' + yamlSnippet(v, indent + '  ');
    } else {
      out += indent + key + ': ' + yamlScalar(v) + '\n';
    }
  }
  return out;
}

// Copy text, or select it for the user when the clipboard is refused.
export async function copyText(text, pre, status) {
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = 'Copied.';
  } catch (e) {
    const r = document.createRange();
    r.selectNodeContents(pre);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(r);
    status.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
  }
}

// Draw "not found" for a missing object: the title, what was asked for,
// a way back.
export function notFound(main, title, what, id, back, backText) {
  document.title = title + ' · preflight';
  put(main, h('h1', {}, title),
    h('p', {role: 'alert'}, `There is no ${what} `, h('code', {}, id), '.'),
    h('p', {}, h('a', {href: back}, backText)));
}

// A short message for an error thrown by api().
export function errorText(e) {
  if (e instanceof ApiError) {
    const p = e.problem || {};
    let t = (p.title || 'HTTP ' + e.status) + ' (' + e.status + ')';
    if (p.detail) t += ': ' + p.detail;
    if (p.line) t += ' at line ' + p.line + ', column ' + p.column;
    return t;
  }
  return String(e && e.message ? e.message : e);
}
