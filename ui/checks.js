// ui/checks.js: the Checks page (/): the team's checks, newest first, with
// filters kept in the URL and cursor paging (GET /v1/checks).
import {
  h, api, put, gib, gpusText, timeEl, verdictBadge, checkHref,
  historyHref,
} from './lib.js';

const FILTERS = ['verdict', 'name', 'rule', 'since', 'until', 'limit'];
const DATE_ONLY = /^\d{4}-\d\d-\d\d$/;

// The /v1/checks query for the page's URL: an "until" day includes that
// whole day (the API's until is exclusive).
function apiQuery(params) {
  const q = new URLSearchParams();
  for (const k of FILTERS) {
    let v = (params.get(k) || '').trim();
    if (!v) continue;
    if (k === 'until' && DATE_ONLY.test(v)) {
      const d = new Date(v + 'T00:00:00Z');
      d.setUTCDate(d.getUTCDate() + 1);
      v = d.toISOString().slice(0, 10);
    }
    q.set(k, v);
  }
  if (params.get('cursor')) q.set('cursor', params.get('cursor'));
  return q;
}

function field(label, input, note) {
  return h('div', {class: 'field'}, h('label', {for: input.id}, label),
    input, note ? h('small', {id: input.id + '-note'}, note) : null);
}

function filterForm(params, rules) {
  const val = (k) => params.get(k) || '';
  const verdict = h('select', {id: 'f-verdict', name: 'verdict'},
    ['', 'pass', 'warn', 'fail'].map((v) => h('option', {
      value: v, selected: val('verdict') === v,
    }, v || 'any')));
  const name = h('input', {id: 'f-name', name: 'name', type: 'text',
    value: val('name'), autocomplete: 'off'});
  const rule = h('input', {id: 'f-rule', name: 'rule', type: 'text',
    value: val('rule'), list: 'rule-ids', autocomplete: 'off',
    'aria-describedby': 'f-rule-note'});
  const since = h('input', {id: 'f-since', name: 'since',
    type: DATE_ONLY.test(val('since')) || !val('since') ? 'date' : 'text',
    value: val('since')});
  const until = h('input', {id: 'f-until', name: 'until',
    type: DATE_ONLY.test(val('until')) || !val('until') ? 'date' : 'text',
    value: val('until'), 'aria-describedby': 'f-until-note'});
  const limit = h('select', {id: 'f-limit', name: 'limit'},
    ['', '10', '25', '50', '100', '200'].map((v) => h('option', {
      value: v, selected: val('limit') === v,
    }, v || 'default (50)')));
  const form = h('form', {class: 'filters', role: 'search',
    'aria-label': 'Filter checks', action: '/', method: 'get'},
  field('Verdict', verdict),
  field('Config name', name),
  field('Rule', rule, 'errors and warnings of this rule id'),
  field('Since (UTC)', since),
  field('Until (UTC, inclusive)', until, 'that whole day included'),
  field('Per page', limit),
  h('div', {class: 'field actions'},
    h('button', {type: 'submit'}, 'Apply filters'), ' ',
    h('a', {href: '/', class: 'button-link'}, 'Clear')),
  h('datalist', {id: 'rule-ids'},
    rules.map((r) => h('option', {value: r.id}))));
  // Only the filters that are set go into the URL.
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const k of FILTERS) {
      const v = form.elements[k].value.trim();
      if (v) q.set(k, v);
    }
    location.assign('/' + (q.toString() ? '?' + q : ''));
  });
  return form;
}

function sourceText(c) {
  const src = c.source;
  if (!src) return '—';
  const parts = [src.repo];
  if (src.commit) parts.push('@ ' + String(src.commit).slice(0, 10));
  if (src.path) parts.push(': ' + src.path);
  return parts.join(' ');
}

function peakCell(c) {
  const m = c.estimate && c.estimate.memory;
  if (!m || typeof m.per_gpu_peak_gib !== 'number') {
    return h('td', {class: 'numcell', 'data-label': 'Peak / capacity'},
      'unknown model');
  }
  const cap = m.capacity_gib;
  const over = typeof cap === 'number' && m.per_gpu_peak_gib > cap;
  const meter = h('span', {class: 'mini' + (over ? ' over' : ''),
    'aria-hidden': 'true'}, h('span', {}));
  if (typeof cap === 'number' && cap > 0) {
    meter.firstChild.style.width =
      Math.min(100, 100 * m.per_gpu_peak_gib / cap).toFixed(1) + '%';
  }
  return h('td', {class: 'numcell', 'data-label': 'Peak / capacity'},
    `${gib(m.per_gpu_peak_gib)} / ${gib(cap)}`, over ? ' (over)' : '', meter);
}

function row(c) {
  return h('tr', {dataset: {id: c.id, verdict: c.verdict}},
    h('td', {'data-label': 'Verdict'}, verdictBadge(c.verdict)),
    h('td', {'data-label': 'Config'},
      h('a', {href: checkHref(c.id), class: 'check-link'},
        c.name || '(unnamed)'),
      c.name ? [' ', h('a', {href: historyHref(c.name), class: 'history-link',
        'aria-label': 'History of ' + c.name}, 'history')] : null),
    h('td', {'data-label': 'Source'}, sourceText(c)),
    h('td', {'data-label': 'GPUs'}, gpusText(c.context)),
    peakCell(c),
    h('td', {'data-label': 'Checked'}, timeEl(c.created_at)));
}

export async function checksPage(main) {
  const params = new URLSearchParams(location.search);
  const [page, rules] = await Promise.all([
    api('/v1/checks?' + apiQuery(params)),
    api('/v1/rules').then((r) => r.items, () => []),
  ]);
  document.title = 'Checks · preflight';
  const filtered = FILTERS.some((k) => params.get(k) && k !== 'limit');
  const nav = h('nav', {class: 'pager', 'aria-label': 'Pages of checks'});
  if (params.get('cursor')) {
    const first = new URLSearchParams(params);
    first.delete('cursor');
    nav.append(h('a', {href: '/' + (first.toString() ? '?' + first : ''),
      rel: 'first', class: 'first-page'}, '← Newest checks'), ' ');
  }
  if (page.next_cursor) {
    const next = new URLSearchParams(params);
    next.set('cursor', page.next_cursor);
    nav.append(h('a', {href: '/?' + next, rel: 'next', class: 'next-page'},
      'Older checks →'));
  } else if (page.items.length > 0) {
    nav.append(h('span', {class: 'last-page'}, 'This is the last page.'));
  }
  put(main,
    h('h1', {}, 'Checks'),
    filterForm(params, rules),
    page.items.length === 0 ?
      h('p', {class: 'empty', role: 'status'}, filtered ?
        'No checks match these filters.' :
        'No checks yet: submit one with POST /v1/checks, from CI, or on ' +
        'the Try a config page.') :
      h('div', {class: 'table-wrap'}, h('table', {class: 'checks stack'},
        h('caption', {}, `${page.items.length} check` +
          (page.items.length === 1 ? '' : 's') +
          (filtered ? ' matching the filters' : '') + ', newest first'),
        h('thead', {}, h('tr', {}, ['Verdict', 'Config', 'Source', 'GPUs',
          'Peak / capacity', 'Checked'].map((t) =>
          h('th', {scope: 'col'}, t)))),
        h('tbody', {}, page.items.map(row)))),
    nav);
}
