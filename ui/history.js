// ui/history.js: the history of one config (/configs/{name}): verdict and
// per-GPU peak across its checks as a small line chart whose points link to
// the checks, and what changed between each check and the one before
// (GET /v1/configs/{name}/checks).
import {
  h, s, api, put, seg, gib, gpusText, timeEl, verdictBadge, checkHref,
  ruleLink, when,
} from './lib.js';

const H = 220;
const PAD = {l: 48, r: 16, t: 14, b: 28};

// Shapes tell the verdicts apart without colour.
function marker(v, x, y) {
  if (v === 'fail') {
    return s('rect', {x: x - 5, y: y - 5, width: 10, height: 10,
      class: 'pt pt-fail'});
  }
  if (v === 'warn') {
    return s('path', {d: `M${x} ${y - 6}L${x + 6} ${y + 5}L${x - 6} ${y + 5}Z`,
      class: 'pt pt-warn'});
  }
  return s('circle', {cx: x, cy: y, r: 5, class: 'pt pt-pass'});
}

// items: newest first, as the API gives them; width: the drawing's width
// in CSS pixels (the room there is, so text keeps its size on a phone).
export function historyChart(items, width = 640) {
  const W = Math.max(280, Math.min(720, Math.round(width)));
  const pts = [...items].reverse().filter((it) => it.memory &&
    typeof it.memory.per_gpu_peak_gib === 'number');
  if (pts.length === 0) {
    return h('p', {class: 'empty'}, 'No memory estimates to chart.');
  }
  const caps = pts.map((it) => it.memory.capacity_gib)
    .filter((c) => typeof c === 'number');
  const top = Math.max(...pts.map((it) => it.memory.per_gpu_peak_gib),
    ...caps) * 1.1 || 1;
  const x = (i) => PAD.l + (pts.length === 1 ? (W - PAD.l - PAD.r) / 2 :
    i * (W - PAD.l - PAD.r) / (pts.length - 1));
  const y = (v) => PAD.t + (H - PAD.t - PAD.b) * (1 - v / top);
  const svg = s('svg', {viewBox: `0 0 ${W} ${H}`, width: W, height: H,
    class: 'chart',
    role: 'group', 'aria-label': `Per-GPU peak of ${pts.length} checks, ` +
      'oldest to newest; each point links to its check'});
  for (const f of [0, 0.5, 1]) {
    const v = top / 1.1 * f;
    svg.append(s('line', {x1: PAD.l, x2: W - PAD.r, y1: y(v), y2: y(v),
      class: 'grid'}),
    s('text', {x: PAD.l - 6, y: y(v) + 4, class: 'axis',
      'text-anchor': 'end'}, v.toFixed(0)));
  }
  svg.append(s('text', {x: 4, y: PAD.t - 2, class: 'axis'}, 'GiB'));
  if (caps.length > 0) {
    const cap = Math.min(...caps);
    svg.append(s('line', {x1: PAD.l, x2: W - PAD.r, y1: y(cap), y2: y(cap),
      class: 'capline'}),
    s('text', {x: W - PAD.r, y: y(cap) - 4, class: 'axis',
      'text-anchor': 'end'}, 'capacity ' + gib(cap)));
  }
  svg.append(s('polyline', {class: 'trend', points: pts.map((it, i) =>
    `${x(i).toFixed(1)},${y(it.memory.per_gpu_peak_gib).toFixed(1)}`)
    .join(' ')}));
  pts.forEach((it, i) => {
    const label = `${when(it.created_at)}: ${it.verdict}, ` +
      `${gib(it.memory.per_gpu_peak_gib)} per GPU on ${gpusText(it.context)}`;
    svg.append(s('a', {href: checkHref(it.id), class: 'point',
      dataset: {id: it.id}, 'aria-label': label},
    s('title', {}, label),
    marker(it.verdict, x(i), y(it.memory.per_gpu_peak_gib))));
  });
  // The first and last times; on a narrow chart only their dates fit.
  const stamp = (it) => (W < 480 ? when(it.created_at).slice(0, 10) :
    when(it.created_at));
  svg.append(s('text', {x: PAD.l, y: H - 8, class: 'axis'}, stamp(pts[0])),
    s('text', {x: W - PAD.r, y: H - 8, class: 'axis', 'text-anchor': 'end'},
      stamp(pts[pts.length - 1])));
  return h('figure', {class: 'chart-box'}, svg,
    h('figcaption', {}, 'Per-GPU peak memory by check, oldest left; ',
      'shapes: ● pass, ▲ warn, ■ fail.'));
}

const CONTEXT_NAMES = {gpus: 'GPUs', gpu: 'GPU type', nodes: 'nodes',
  gpus_per_node: 'GPUs per node', interconnect: 'interconnect'};

// "GPUs 8 → 16", "GPU type h100-sxm → a100-80gb", ...
export function contextChangeItems(cc) {
  return Object.entries(cc || {}).map(([k, v]) => h('li', {
    class: 'ctx-change', dataset: {field: k},
  }, h('strong', {}, CONTEXT_NAMES[k] || k), ' ',
  String(v.from ?? '—'), ' → ', String(v.to ?? '—')));
}

function findingChanges(list, sign) {
  return (list || []).map((f) => h('li', {class: sign === '+' ?
    'added' : 'removed', dataset: {rule: f.rule}},
  h('span', {'aria-hidden': 'true'}, sign + ' '),
  h('span', {class: 'sr-only'}, sign === '+' ? 'new: ' : 'gone: '),
  ruleLink(f.rule), ` (${f.severity}, line ${f.line})`));
}

function delta(v) {
  if (typeof v !== 'number') return null;
  return (v > 0 ? '+' : '') + v.toFixed(2) + ' GiB';
}

export function changeSummary(ch) {
  if (!ch) return h('span', {class: 'muted'}, 'first check of this config');
  const items = [...contextChangeItems(ch.context_changes)];
  items.push(h('li', {}, ch.config_changed ? 'config edited' :
    'same config'));
  if (ch.verdict && ch.verdict.from !== ch.verdict.to) {
    items.push(h('li', {}, 'verdict ', ch.verdict.from, ' → ',
      ch.verdict.to));
  }
  if (typeof ch.memory_delta_gib === 'number' && ch.memory_delta_gib !== 0) {
    items.push(h('li', {}, 'memory ', delta(ch.memory_delta_gib)));
  }
  items.push(...findingChanges(ch.findings_added, '+'),
    ...findingChanges(ch.findings_removed, '−'));
  return h('ul', {class: 'changes'}, items);
}

// The failed runs diagnosed against a check (POST /v1/diagnose), when
// the history carries them.
function failureList(failures) {
  if (!Array.isArray(failures) || failures.length === 0) return null;
  return h('ul', {class: 'failures', 'aria-label': 'Diagnosed failures'},
    failures.map((f) => h('li', {dataset: {diagnosis: f.diagnosis || ''}},
      h('span', {'aria-hidden': 'true'}, '✖ '), f.summary)));
}

export async function historyPage(main, name) {
  const params = new URLSearchParams(location.search);
  const q = new URLSearchParams({limit: '100'});
  if (params.get('cursor')) q.set('cursor', params.get('cursor'));
  const page = await api('/v1/configs/' + seg(name) + '/checks?' + q);
  document.title = 'History of ' + name + ' · preflight';
  const rows = page.items.map((it) => h('tr', {dataset: {id: it.id}},
    h('td', {'data-label': 'Checked'},
      h('a', {href: checkHref(it.id)}, timeEl(it.created_at))),
    h('td', {'data-label': 'Verdict'}, verdictBadge(it.verdict)),
    h('td', {'data-label': 'GPUs'}, gpusText(it.context)),
    h('td', {'data-label': 'Peak / capacity', class: 'numcell'},
      it.memory ? `${gib(it.memory.per_gpu_peak_gib)} / ` +
        gib(it.memory.capacity_gib) : 'unknown'),
    h('td', {'data-label': 'Errors / warnings', class: 'numcell'},
      `${it.errors} / ${it.warnings}`),
    h('td', {'data-label': 'What changed'}, changeSummary(it.changes),
      failureList(it.failures),
      it.previous_id ? h('a', {href: checkHref(it.id) + '/diff/' +
        seg(it.previous_id), class: 'diff-link'},
      'Diff with the check before') : null)));
  const more = page.next_cursor ? h('nav', {class: 'pager',
    'aria-label': 'Older history'}, h('a', {rel: 'next', class: 'next-page',
    href: '/configs/' + seg(name) + '?cursor=' + seg(page.next_cursor)},
  'Older checks →')) : null;
  put(main,
    h('h1', {}, 'History of ', h('code', {}, name)),
    page.items.length === 0 ? h('p', {class: 'empty', role: 'status'},
      'No checks of this config for your team.') : [
      h('section', {class: 'card', 'aria-labelledby': 'h-chart'},
        h('h2', {id: 'h-chart'}, 'Per-GPU peak over time'),
        historyChart(page.items, main.clientWidth - 70)),
      h('section', {class: 'card', 'aria-labelledby': 'h-timeline'},
        h('h2', {id: 'h-timeline'}, 'Checks, newest first'),
        h('div', {class: 'table-wrap'}, h('table', {class: 'history stack'},
          h('caption', {class: 'sr-only'}, 'Each check of ' + name +
            ' and what changed since the one before'),
          h('thead', {}, h('tr', {}, ['Checked', 'Verdict', 'GPUs',
            'Peak / capacity', 'Errors / warnings', 'What changed']
            .map((t) => h('th', {scope: 'col'}, t)))),
          h('tbody', {}, rows))))],
    more);
}
