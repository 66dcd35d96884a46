// ui/diff.js: two checks side by side (/checks/{id}/diff/{other}):
// findings added and removed, the memory delta per term, the context
// change, and a line diff of the two configs (GET /v1/checks/{id}/diff,
// both checks and both configs).
import {
  h, api, put, seg, gib, verdictBadge, timeEl, checkHref, gpusText,
} from './lib.js';
import {findingEl} from './report.js';
import {contextChangeItems} from './history.js';
import {diffLines, hunks} from './linediff.js';

function lines(text) {
  const l = text.split('\n');
  if (l.length > 1 && l[l.length - 1] === '') l.pop();
  return l;
}

function memoryTable(older, newer, byTerm) {
  const mo = (older.estimate && older.estimate.memory) || {};
  const mn = (newer.estimate && newer.estimate.memory) || {};
  if (!byTerm) {
    return h('p', {class: 'empty'}, 'One of the two checks has no memory ' +
      'estimate.');
  }
  const bo = mo.breakdown_gib || {};
  const bn = mn.breakdown_gib || {};
  const fmtDelta = (d) => (d > 0 ? '+' : d < 0 ? '−' : '±') +
    Math.abs(d).toFixed(2) + ' GiB';
  const row = (label, a, b, d, cls) => h('tr', {class: cls || '',
    dataset: {term: label}},
  h('th', {scope: 'row'}, label),
  h('td', {class: 'numcell'}, gib(a)), h('td', {class: 'numcell'}, gib(b)),
  h('td', {class: 'numcell delta'}, typeof d === 'number' ? fmtDelta(d) :
    '—'));
  return h('table', {class: 'memdiff'},
    h('caption', {}, 'Memory per GPU, before and after'),
    h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Term'),
      h('th', {scope: 'col'}, 'Before'), h('th', {scope: 'col'}, 'After'),
      h('th', {scope: 'col'}, 'Change'))),
    h('tbody', {}, Object.keys(byTerm).map((t) =>
      row(t, bo[t] ?? 0, bn[t] ?? 0, byTerm[t]))),
    h('tfoot', {}, row('per-GPU peak', mo.per_gpu_peak_gib,
      mn.per_gpu_peak_gib, typeof mo.per_gpu_peak_gib === 'number' &&
      typeof mn.per_gpu_peak_gib === 'number' ?
        Math.round(100 * (mn.per_gpu_peak_gib - mo.per_gpu_peak_gib)) / 100 :
        null, 'total'),
    mo.capacity_gib !== mn.capacity_gib ? row('capacity', mo.capacity_gib,
      mn.capacity_gib, typeof mo.capacity_gib === 'number' &&
      typeof mn.capacity_gib === 'number' ?
        Math.round(100 * (mn.capacity_gib - mo.capacity_gib)) / 100 : null,
    'total') : null));
}

function lineDiff(oldText, newText) {
  const rows = diffLines(lines(oldText), lines(newText));
  if (rows === null) {
    return h('p', {class: 'empty'}, 'The two configs differ in too many ' +
      'lines to show a line diff.');
  }
  if (!rows.some((r) => r[0] !== ' ')) {
    return h('p', {class: 'empty'}, 'The two configs are identical.');
  }
  const body = h('tbody');
  for (const r of hunks(rows)) {
    if (r.skip) {
      body.append(h('tr', {class: 'skip'}, h('td', {colspan: 4},
        `… ${r.skip} unchanged line${r.skip === 1 ? '' : 's'}`)));
      continue;
    }
    const [op, a, b, text] = r;
    const cls = op === '+' ? 'add' : op === '-' ? 'del' : 'same';
    body.append(h('tr', {class: cls},
      h('td', {class: 'ln'}, a ?? ''), h('td', {class: 'ln'}, b ?? ''),
      h('td', {class: 'op'}, h('span', {'aria-hidden': 'true'},
        op === ' ' ? '' : op === '-' ? '−' : '+'),
      h('span', {class: 'sr-only'}, op === '+' ? 'added' : op === '-' ?
        'removed' : '')),
      h('td', {class: 'code'}, h('code', {}, text))));
  }
  return h('div', {class: 'config-wrap'}, h('table', {class: 'linediff'},
    h('caption', {class: 'sr-only'}, 'Line diff: old line number, new ' +
      'line number, change, text'),
    h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Old'),
      h('th', {scope: 'col'}, 'New'), h('th', {scope: 'col'},
        h('span', {class: 'sr-only'}, 'Change')),
      h('th', {scope: 'col'}, 'Line'))),
    body));
}

function findingBlock(title, id, list, cls) {
  return h('section', {class: 'card ' + cls, 'aria-labelledby': id},
    h('h2', {id}, `${title} (${list.length})`),
    list.length === 0 ? h('p', {class: 'empty'}, 'None.') :
      h('ul', {class: 'findings'}, list.map((f) => h('li', {
        class: 'sev-' + f.severity}, findingEl(f)))));
}

export async function diffPage(main, id, other) {
  const [d, newer, older, newText, oldText] = await Promise.all([
    api('/v1/checks/' + seg(id) + '/diff?against=' + seg(other)),
    api('/v1/checks/' + seg(id)),
    api('/v1/checks/' + seg(other)),
    api('/v1/checks/' + seg(id) + '/config', {text: true}),
    api('/v1/checks/' + seg(other) + '/config', {text: true}),
  ]);
  document.title = 'Diff · preflight';
  const ctxItems = contextChangeItems(d.context_changes);
  const side = (c, label) => h('div', {class: 'side'},
    h('h2', {class: 'h3'}, label), h('p', {}, verdictBadge(c.verdict), ' ',
      h('a', {href: checkHref(c.id)}, c.name || c.id)),
    h('p', {class: 'sub'}, timeEl(c.created_at), ' · ', gpusText(c.context)));
  put(main,
    h('h1', {}, 'What changed'),
    h('div', {class: 'two sides'}, side(older, 'Before'),
      side(newer, 'After')),
    h('section', {class: 'card', 'aria-labelledby': 'h-summary'},
      h('h2', {id: 'h-summary'}, 'Summary'),
      h('ul', {class: 'changes'},
        h('li', {}, 'Verdict ', verdictBadge(d.verdict.from), ' → ',
          verdictBadge(d.verdict.to)),
        h('li', {}, d.config_changed ? 'The config was edited.' :
          'The config is the same.'),
        ctxItems.length > 0 ? ctxItems :
          h('li', {}, 'Same GPUs and GPU type: ' + gpusText(newer.context)),
        typeof d.memory_delta_gib === 'number' ?
          h('li', {}, 'Per-GPU peak ' + (d.memory_delta_gib > 0 ? '+' : '') +
            d.memory_delta_gib.toFixed(2) + ' GiB') : null)),
    h('div', {class: 'two'},
      findingBlock('Findings added', 'h-added', d.findings_added, 'added'),
      findingBlock('Findings removed', 'h-removed', d.findings_removed,
        'removed')),
    h('section', {class: 'card', 'aria-labelledby': 'h-memdiff'},
      h('h2', {id: 'h-memdiff'}, 'Memory by term'),
      memoryTable(older, newer, d.memory_delta_by_term_gib)),
    h('section', {class: 'card', 'aria-labelledby': 'h-linediff'},
      h('h2', {id: 'h-linediff'}, 'Config changes'),
      lineDiff(oldText, newText)));
}
