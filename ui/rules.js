// ui/rules.js: the rule catalog (/rules) and one rule (/rules/{id}), with
// how often each fired in the team's checks (GET /v1/rules, /v1/rules/{id},
// /v1/stats/rules).
import {
  h, api, put, seg, num, sevBadge, ApiError, notFound,
} from './lib.js';

function statsByRule(stats) {
  const m = new Map();
  for (const it of stats.items || []) m.set(it.rule, it);
  return m;
}

function checksHref(id) {
  return '/?rule=' + seg(id);
}

export async function rulesPage(main) {
  const params = new URLSearchParams(location.search);
  const [rules, stats] = await Promise.all([api('/v1/rules'),
    api('/v1/stats/rules')]);
  const counts = statsByRule(stats);
  document.title = 'Rules · preflight';
  const filter = h('input', {id: 'rule-filter', type: 'search',
    value: params.get('q') || '', autocomplete: 'off',
    'aria-describedby': 'rule-count'});
  const fired = h('input', {id: 'rule-fired', type: 'checkbox',
    checked: params.get('fired') === '1'});
  const count = h('p', {id: 'rule-count', role: 'status'});
  const rows = rules.items.map((r) => {
    const st = counts.get(r.id);
    return {r, st, tr: h('tr', {dataset: {rule: r.id}},
      h('td', {'data-label': 'Rule'}, h('a', {href: '/rules/' + seg(r.id)},
        h('code', {}, r.id))),
      h('td', {'data-label': 'Severity'}, sevBadge(r.severity)),
      h('td', {'data-label': 'What it checks'}, r.title),
      h('td', {'data-label': 'Findings', class: 'numcell'},
        st ? num(st.findings) : '0'),
      h('td', {'data-label': 'Checks', class: 'numcell'}, st ?
        h('a', {href: checksHref(r.id), 'aria-label':
          `${st.checks} checks with ${r.id}`}, num(st.checks)) : '0'))};
  });
  // Most frequent first, then by id.
  rows.sort((a, b) => ((b.st ? b.st.findings : 0) -
    (a.st ? a.st.findings : 0)) || a.r.id.localeCompare(b.r.id));
  const tbody = h('tbody', {}, rows.map((x) => x.tr));
  function apply() {
    const q = filter.value.trim().toLowerCase();
    let shown = 0;
    for (const x of rows) {
      const hit = (!q || x.r.id.includes(q) ||
        x.r.title.toLowerCase().includes(q)) && (!fired.checked || x.st);
      x.tr.hidden = !hit;
      if (hit) shown++;
    }
    count.textContent = `${shown} of ${rows.length} rules shown.`;
    const u = new URLSearchParams();
    if (filter.value.trim()) u.set('q', filter.value.trim());
    if (fired.checked) u.set('fired', '1');
    history.replaceState(null, '', '/rules' + (u.toString() ? '?' + u : ''));
  }
  filter.addEventListener('input', apply);
  fired.addEventListener('change', apply);
  put(main, h('h1', {}, 'Rules'),
    h('form', {class: 'filters', role: 'search', 'aria-label':
      'Filter rules', onsubmit: (ev) => ev.preventDefault()},
    h('div', {class: 'field'}, h('label', {for: 'rule-filter'},
      'Filter by id or words'), filter),
    h('div', {class: 'field check'}, fired, ' ', h('label', {for: 'rule-fired'},
      'Only rules that fired in your checks'))),
    count,
    h('div', {class: 'table-wrap'}, h('table', {class: 'rules stack'},
      h('caption', {}, 'Every rule, the most frequent in your team\'s ' +
        'checks first'),
      h('thead', {}, h('tr', {}, ['Rule', 'Severity', 'What it checks',
        'Findings', 'Checks'].map((t) => h('th', {scope: 'col'}, t)))),
      tbody)));
  apply();
}

export async function rulePage(main, id) {
  let r;
  try {
    r = await api('/v1/rules/' + seg(id));
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      notFound(main, 'No such rule', 'rule', id, '/rules', 'Every rule');
      return;
    }
    throw e;
  }
  const stats = await api('/v1/stats/rules');
  const st = statsByRule(stats).get(r.id);
  document.title = r.id + ' · preflight';
  const byVerdict = st ? Object.entries(st.by_verdict) : [];
  put(main,
    h('h1', {}, h('code', {}, r.id)),
    h('p', {}, sevBadge(r.severity), ' ', r.title),
    h('section', {class: 'card', 'aria-labelledby': 'h-fix'},
      h('h2', {id: 'h-fix'}, 'How to fix it'), h('p', {}, r.hint)),
    h('section', {class: 'card', 'aria-labelledby': 'h-docs'},
      h('h2', {id: 'h-docs'}, 'Why'), h('p', {class: 'docs'}, r.docs)),
    h('section', {class: 'card', 'aria-labelledby': 'h-count'},
      h('h2', {id: 'h-count'}, 'In your team\'s checks'),
      st ? [h('p', {id: 'rule-total'}, `${num(st.findings)} finding` +
        (st.findings === 1 ? '' : 's') + ` in ${num(st.checks)} check` +
        (st.checks === 1 ? '' : 's') + '.'),
      h('ul', {}, byVerdict.map(([v, x]) => h('li', {},
        `${v}: ${num(x.findings)} findings in ${num(x.checks)} checks`))),
      r.severity !== 'info' ? h('p', {}, h('a', {href: checksHref(r.id)},
        'The checks with this finding')) : null] :
        h('p', {id: 'rule-total'}, 'It has not fired in your checks.')));
}
