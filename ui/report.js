// ui/report.js: drawing the parts of one report (DESIGN.md, "The report"):
// findings on the config's lines, the memory bar, the plan, throughput and
// suggestions.  Used by the check page and the try page.
import {
  h, gib, num, tokensPerSecond, seconds, sevBadge, ruleLink, yamlSnippet,
  copyText, gpusText,
} from './lib.js';

const SEV_ORDER = {error: 0, warning: 1, info: 2};

export function countBySeverity(findings) {
  const n = {error: 0, warning: 0, info: 0};
  for (const f of findings || []) n[f.severity] = (n[f.severity] || 0) + 1;
  return n;
}

export function countsText(findings) {
  const n = countBySeverity(findings);
  return `${n.error} error${n.error === 1 ? '' : 's'}, ` +
    `${n.warning} warning${n.warning === 1 ? '' : 's'}, ${n.info} info`;
}

// One finding: severity (symbol and word), message, hint, rule link.
export function findingEl(f, opts = {}) {
  return h('div', {
    class: 'finding sev-' + f.severity,
    dataset: {rule: f.rule, line: f.line, severity: f.severity},
  },
  h('p', {class: 'finding-head'}, sevBadge(f.severity), ' ',
    h('span', {class: 'msg'}, f.message)),
  f.hint ? h('p', {class: 'hint'}, h('strong', {}, 'Fix: '), f.hint) : null,
  h('p', {class: 'meta'}, ruleLink(f.rule),
    opts.where !== false ? ` · line ${f.line}, column ${f.column}` : '',
    f.path ? ' · ' : '', f.path ? h('code', {}, f.path) : ''));
}

// The findings as a list, most severe first, each linking to its line.
export function findingList(findings, withLineLinks) {
  const sorted = [...(findings || [])].sort((a, b) =>
    (SEV_ORDER[a.severity] - SEV_ORDER[b.severity]) || (a.line - b.line));
  if (sorted.length === 0) return h('p', {class: 'empty'}, 'No findings.');
  return h('ul', {class: 'findings'}, sorted.map((f) => h('li', {
    class: 'sev-' + f.severity,
  }, findingEl(f),
  withLineLinks ? h('a', {href: '#L' + f.line, class: 'goto'},
    `Go to line ${f.line}`) : null)));
}

// The config with line numbers, each finding marked right under its line.
// A finding past the last line (or on none) goes under the last line.
export function configView(text, findings) {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const byLine = new Map();
  for (const f of findings || []) {
    const at = Math.min(Math.max(f.line || 1, 1), lines.length);
    if (!byLine.has(at)) byLine.set(at, []);
    byLine.get(at).push(f);
  }
  const body = h('tbody');
  lines.forEach((text, i) => {
    const n = i + 1;
    const fs = byLine.get(n) || [];
    const worst = fs.reduce((w, f) =>
      (w === null || SEV_ORDER[f.severity] < SEV_ORDER[w] ? f.severity : w),
    null);
    body.append(h('tr', {
      id: 'L' + n, class: 'line' + (worst ? ' has-' + worst : ''),
      dataset: {line: n},
    }, h('th', {scope: 'row', class: 'ln'}, String(n)),
    h('td', {class: 'code'}, h('code', {}, text))));
    for (const f of fs) {
      body.append(h('tr', {
        class: 'marker sev-' + f.severity, dataset: {line: n},
      }, h('td', {class: 'ln', 'aria-hidden': 'true'}, '↳'),
      h('td', {}, findingEl(f, {where: true}))));
    }
  });
  return h('div', {class: 'config-wrap'},
    h('table', {class: 'config'},
      h('caption', {class: 'sr-only'},
        'The submitted config, one row per line, with each finding ' +
        'under the line it points at'),
      body));
}

const TERM_ORDER = ['weights', 'gradients', 'optimizer', 'activations',
  'logits', 'buffers', 'runtime'];

// The memory estimate as a stacked bar against the GPU's capacity, the
// calibration range and the allocated peak when the estimator gives them.
// Segments add up to the peak: what the breakdown does not itemise is an
// "other" segment.
export function memoryBar(est) {
  const m = est && est.memory;
  if (!m || typeof m.per_gpu_peak_gib !== 'number') {
    return h('p', {class: 'empty'}, 'No memory estimate: the model is not ' +
      'known (see the estimate.model_unknown finding for how to give it).');
  }
  const peak = m.per_gpu_peak_gib;
  const cap = typeof m.capacity_gib === 'number' ? m.capacity_gib : null;
  const range = Array.isArray(m.range_gib) && m.range_gib.length === 2 ?
    m.range_gib : null;
  const bd = m.breakdown_gib || {};
  const terms = Object.keys(bd).sort((a, b) => {
    const ia = TERM_ORDER.indexOf(a); const ib = TERM_ORDER.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b);
  }).filter((t) => typeof bd[t] === 'number' && bd[t] > 0)
    .map((t) => [t, bd[t]]);
  const itemised = terms.reduce((a, [, v]) => a + v, 0);
  if (peak - itemised > 0.05) terms.push(['other', peak - itemised]);
  const top = Math.max(peak, cap || 0, range ? range[1] : 0) * 1.08 || 1;
  const pct = (v) => (100 * v / top).toFixed(3) + '%';
  const total = terms.reduce((a, [, v]) => a + v, 0);

  const bar = h('div', {
    class: 'bar', dataset: {peak: String(peak), capacity: String(cap ?? '')},
  });
  for (const [t, v] of terms) {
    // Segments are scaled to add up to the peak exactly.
    const w = total > 0 ? v * peak / total : 0;
    const el = h('div', {
      class: 'seg seg-' + (TERM_ORDER.includes(t) ? t : 'other'),
      dataset: {term: t, gib: v.toFixed(2)}, title: `${t}: ${gib(v)}`,
    });
    el.style.width = pct(w);
    bar.append(el);
  }
  if (range) {
    const r = h('div', {class: 'range', title:
      `calibration range ${gib(range[0])} – ${gib(range[1])}`});
    r.style.left = pct(range[0]);
    r.style.width = pct(range[1] - range[0]);
    bar.append(r);
  }
  if (typeof m.allocated_peak_gib === 'number') {
    const a = h('div', {class: 'alloc', title:
      `allocated peak ${gib(m.allocated_peak_gib)}`});
    a.style.left = pct(m.allocated_peak_gib);
    bar.append(a);
  }
  if (cap !== null) {
    // The label sits on the side of the line with room for it.
    const c = h('div', {class: 'cap' + (cap / top > 0.5 ? ' flip' : ''),
      title: `capacity ${gib(cap)}`}, h('span', {}, 'capacity ' + gib(cap)));
    c.style.left = pct(cap);
    bar.append(c);
  }
  const fits = m.fits === true ? 'fits' : m.fits === false ?
    'does not fit' : 'capacity unknown';
  const summary = `${gib(peak)} per GPU` +
    (cap !== null ? ` of ${gib(cap)} (${Math.round(100 * peak / cap)}%)` :
      '') + ` — ${fits}`;
  bar.setAttribute('role', 'img');
  bar.setAttribute('aria-label', 'Memory per GPU: ' + summary + '. ' +
    terms.map(([t, v]) => `${t} ${gib(v)}`).join(', '));
  const legend = h('ul', {class: 'legend'}, terms.map(([t, v]) =>
    h('li', {}, h('span', {
      class: 'swatch seg-' + (TERM_ORDER.includes(t) ? t : 'other'),
      'aria-hidden': 'true',
    }), `${t} ${gib(v)}`)));
  const extra = [];
  if (range) {
    extra.push(h('li', {}, 'Calibration range: ',
      `${gib(range[0])} – ${gib(range[1])}`));
  }
  if (typeof m.allocated_peak_gib === 'number') {
    extra.push(h('li', {}, 'Allocated at the peak (tensors alive): ',
      gib(m.allocated_peak_gib)));
  }
  if (typeof m.cpu_offload_gib === 'number' && m.cpu_offload_gib > 0) {
    extra.push(h('li', {}, 'Offloaded to host memory: ',
      gib(m.cpu_offload_gib)));
  }
  return h('figure', {class: 'membar ' + (m.fits === false ? 'over' : 'ok')},
    h('figcaption', {}, h('strong', {}, 'Peak: '), summary),
    bar, legend, extra.length ? h('ul', {class: 'memextra'}, extra) : null);
}

function dl(pairs) {
  return h('dl', {class: 'facts'}, pairs.filter(([, v]) =>
    v !== null && v !== undefined && v !== '').map(([k, v]) =>
    [h('dt', {}, k), h('dd', {}, v)]));
}

export function contextFacts(ctx) {
  ctx = ctx || {};
  return dl([
    ['GPUs', gpusText(ctx)],
    ['Per node', ctx.gpus_per_node],
    ['Interconnect', ctx.interconnect],
    ['torch', ctx.torch],
    ['GPU memory override', typeof ctx.gpu_memory_gib === 'number' ?
      gib(ctx.gpu_memory_gib) : null],
  ]);
}

export function planFacts(plan) {
  if (!plan) return h('p', {class: 'empty'}, 'No plan.');
  const mesh = plan.mesh ? Object.entries(plan.mesh)
    .map(([k, v]) => `${k} ${v}`).join(' × ') : null;
  return dl([
    ['Strategy', plan.strategy + (plan.zero_stage ? ` (ZeRO ${plan.zero_stage})` :
      '')],
    ['Mesh', mesh],
    ['Precision', plan.precision],
    ['Attention', plan.attention],
    ['Adapter', plan.adapter ?? 'none (full fine-tune)'],
    ['Micro batch', plan.micro_batch_size],
    ['Gradient accumulation', plan.gradient_accumulation_steps],
    ['Global batch', plan.global_batch_size],
    ['Sequence length', num(plan.sequence_len)],
    ['Tokens per step', num(plan.tokens_per_step)],
  ]);
}

export function throughputFacts(est) {
  const t = est && est.throughput;
  if (!t || typeof t.tokens_per_second !== 'number') {
    return h('p', {class: 'empty'}, 'No throughput estimate.');
  }
  return dl([
    ['Speed', tokensPerSecond(t.tokens_per_second)],
    ['Step time', seconds(t.step_time_s)],
    ['Compute per step', seconds(t.compute_time_s)],
    ['Communication per step', seconds(t.comm_time_s)],
    ['Communication per GPU', typeof t.comm_gb_per_gpu === 'number' ?
      t.comm_gb_per_gpu.toFixed(2) + ' GB' : null],
    ['Bound by', t.bound],
    ['Epoch', typeof t.epoch_time_s === 'number' ? seconds(t.epoch_time_s) :
      null],
    ['GPU-hours per epoch', typeof t.gpu_hours_per_epoch === 'number' ?
      num(t.gpu_hours_per_epoch, 1) : null],
  ]);
}

// The suggestions: the change, the peak it gives, the speed, a YAML
// snippet to copy.
export function suggestionTable(sugs, capacity) {
  if (!sugs || sugs.length === 0) {
    return h('p', {class: 'empty'}, 'No suggestions: nothing to change ' +
      'for memory.');
  }
  const rows = sugs.map((sg, i) => {
    const yaml = yamlSnippet(sg.set);
    const pre = h('pre', {class: 'snippet', id: 'snippet-' + i},
      h('code', {}, yaml));
    const status = h('span', {class: 'copy-status', role: 'status'});
    const fits = typeof capacity === 'number' ?
      (sg.per_gpu_peak_gib <= capacity ? 'fits' : 'over capacity') : '';
    return h('tr', {dataset: {index: i}},
      h('td', {}, h('ul', {class: 'set'}, Object.entries(sg.set || {})
        .map(([k, v]) => h('li', {}, h('code', {},
          `${k}: ${JSON.stringify(v)}`)))),
      sg.why ? h('p', {class: 'why'}, sg.why) : null),
      h('td', {class: 'numcell'}, gib(sg.per_gpu_peak_gib),
        fits ? h('span', {class: 'fitnote'}, ' (' + fits + ')') : null),
      h('td', {class: 'numcell'}, tokensPerSecond(sg.tokens_per_second)),
      h('td', {}, pre, h('button', {
        type: 'button', class: 'copy',
        'aria-describedby': 'snippet-' + i,
        onclick: () => copyText(yaml, pre, status),
      }, 'Copy YAML'), ' ', status));
  });
  return h('table', {class: 'suggestions'},
    h('caption', {}, 'Config changes that bring the peak down, fastest ' +
      'first'),
    h('thead', {}, h('tr', {},
      h('th', {scope: 'col'}, 'Change'),
      h('th', {scope: 'col'}, 'Per-GPU peak'),
      h('th', {scope: 'col'}, 'Speed'),
      h('th', {scope: 'col'}, 'YAML'))),
    h('tbody', {}, rows));
}

// Everything below the verdict, for the check page and the try page.
// text: the config (or null when unknown).
export function reportBody(r, text) {
  const findings = r.findings || [];
  const infos = findings.filter((f) => f.severity === 'info').length;
  const toggle = h('input', {type: 'checkbox', id: 'show-info'});
  const findingsBox = h('div', {class: 'findings-box hide-info'});
  toggle.addEventListener('change', () =>
    findingsBox.classList.toggle('hide-info', !toggle.checked));
  findingsBox.append(
    text !== null ? configView(text, findings) : findingList(findings));
  const cap = r.estimate && r.estimate.memory ?
    r.estimate.memory.capacity_gib : null;
  return [
    h('section', {class: 'card', 'aria-labelledby': 'h-findings'},
      h('h2', {id: 'h-findings'}, 'Findings'),
      h('p', {class: 'counts'}, countsText(findings)),
      infos > 0 ? h('p', {class: 'toggle'}, toggle, ' ',
        h('label', {for: 'show-info'}, `Show the ${infos} info notes ` +
          '(what Axolotl fills in on its own)')) : null,
      text !== null ? h('details', {class: 'summary-list'},
        h('summary', {}, 'All findings as a list'),
        findingList(findings, true)) : null,
      findingsBox),
    h('section', {class: 'card', 'aria-labelledby': 'h-memory'},
      h('h2', {id: 'h-memory'}, 'Memory per GPU'), memoryBar(r.estimate)),
    h('section', {class: 'card', 'aria-labelledby': 'h-speed'},
      h('h2', {id: 'h-speed'}, 'Throughput'), throughputFacts(r.estimate)),
    h('section', {class: 'card', 'aria-labelledby': 'h-sugs'},
      h('h2', {id: 'h-sugs'}, 'Suggestions'),
      suggestionTable(r.suggestions, cap)),
  ];
}
