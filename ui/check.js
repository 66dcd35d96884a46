// ui/check.js: one check (/checks/{id}): verdict, context and plan, the
// submitted config with each finding on its line, memory, throughput and
// suggestions (GET /v1/checks/{id} and /v1/checks/{id}/config).
import {
  h, api, put, seg, verdictBadge, timeEl, historyHref, checkHref,
  ApiError, notFound,
} from './lib.js';
import {reportBody, contextFacts, planFacts} from './report.js';

// The check stored just before c under the same name, or null.
async function previousOf(c) {
  if (!c.name) return null;
  const q = new URLSearchParams({name: c.name, until: c.created_at,
    limit: '1'});
  const page = await api('/v1/checks?' + q).catch(() => ({items: []}));
  return page.items.length > 0 ? page.items[0] : null;
}

function labelsList(labels) {
  const entries = Object.entries(labels || {});
  if (entries.length === 0) return null;
  return h('ul', {class: 'labels', 'aria-label': 'Labels'},
    entries.map(([k, v]) => h('li', {}, h('code', {}, k + '=' + v))));
}

export async function checkPage(main, id) {
  let c;
  try {
    c = await api('/v1/checks/' + seg(id));
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      notFound(main, 'Check not found', 'check for your team', id, '/',
        'All checks');
      return;
    }
    throw e;
  }
  const [text, prev] = await Promise.all([
    api('/v1/checks/' + seg(id) + '/config', {text: true}),
    previousOf(c),
  ]);
  document.title = (c.name || c.id) + ' · preflight';
  const src = c.source;
  const links = [];
  if (c.name) {
    links.push(h('a', {href: historyHref(c.name)}, 'History of this config'));
  }
  if (prev) {
    links.push(h('a', {href: checkHref(c.id) + '/diff/' + seg(prev.id),
      class: 'diff-prev'}, 'Compare with the previous check'));
  }
  put(main,
    h('h1', {}, verdictBadge(c.verdict), ' ', c.name || '(unnamed config)'),
    h('p', {class: 'sub'}, 'Check ', h('code', {}, c.id), ' · ',
      timeEl(c.created_at), ' · team ', h('code', {}, c.team)),
    links.length ? h('p', {class: 'links'},
      links.flatMap((l, i) => (i ? [' · ', l] : [l]))) : null,
    labelsList(c.labels),
    src ? h('p', {class: 'source'}, 'From ', h('code', {}, src.repo),
      src.commit ? [' at ', h('code', {}, src.commit)] : null,
      src.path ? [', ', h('code', {}, src.path)] : null,
      src.ref ? [' (', h('code', {}, src.ref), ')'] : null,
      typeof src.pull_request === 'number' ?
        ', pull request #' + src.pull_request : null) : null,
    h('div', {class: 'two'},
      h('section', {class: 'card', 'aria-labelledby': 'h-context'},
        h('h2', {id: 'h-context'}, 'Where it runs'), contextFacts(c.context)),
      h('section', {class: 'card', 'aria-labelledby': 'h-plan'},
        h('h2', {id: 'h-plan'}, 'What Axolotl will do'), planFacts(c.plan))),
    reportBody(c, text));
}
