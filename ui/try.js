// ui/try.js: Try a config (/try): paste YAML or drop a file, pick the GPUs,
// and see the report live from POST /v1/checks?dry_run=true as you edit
// (debounced); a button stores it as a check.
import {
  h, api, put, ApiError, AuthError, checkHref, verdictBadge, errorText,
} from './lib.js';
import {reportBody} from './report.js';

const DEBOUNCE_MS = 350;
const MAX_FILE = 1 << 20;

function field(label, input, note) {
  return h('div', {class: 'field'}, h('label', {for: input.id}, label), input,
    note ? h('small', {id: input.id + '-note'}, note) : null);
}

export async function tryPage(main) {
  const gpus = await api('/v1/catalog/gpus').then((r) => r.items);
  document.title = 'Try a config · preflight';
  const config = h('textarea', {id: 'config', name: 'config', rows: 18,
    spellcheck: 'false', autocomplete: 'off', 'aria-describedby':
      'config-note', placeholder: 'base_model: meta-llama/Llama-3.1-8B\n' +
      'adapter: lora\nsequence_len: 4096\nmicro_batch_size: 2\n...'});
  const file = h('input', {id: 'file', type: 'file',
    accept: '.yaml,.yml,application/yaml,text/yaml'});
  const nGpus = h('input', {id: 'gpus', name: 'gpus', type: 'number',
    min: 1, max: 1000000, value: 8, inputmode: 'numeric', required: true});
  const nodes = h('input', {id: 'nodes', name: 'nodes', type: 'number',
    min: 1, max: 1000000, value: 1, inputmode: 'numeric', required: true});
  const gpu = h('select', {id: 'gpu', name: 'gpu'}, gpus.map((g) =>
    h('option', {value: g.id, selected: g.id === 'h100-sxm'},
      `${g.name} (${g.id}, ${g.memory_gib} GiB)`)));
  const name = h('input', {id: 'name', name: 'name', type: 'text',
    autocomplete: 'off', maxlength: 1024,
    'aria-describedby': 'name-note'});
  const store = h('button', {type: 'submit', id: 'store', disabled: true},
    'Store this check');
  const status = h('p', {id: 'status', class: 'status', role: 'status'},
    'Paste a config to see its report.');
  const stored = h('p', {id: 'stored', class: 'stored', role: 'status'});
  const live = h('div', {id: 'live', class: 'live', 'aria-live': 'polite'});

  let seq = 0;
  let timer = null;

  const body = () => ({
    config: config.value,
    context: {gpus: Number(nGpus.value) || 1, nodes: Number(nodes.value) || 1,
      gpu: gpu.value},
  });

  async function run() {
    const mine = ++seq;
    if (config.value.trim() === '') {
      put(live);
      status.textContent = 'Paste a config to see its report.';
      store.disabled = true;
      return;
    }
    status.textContent = 'Checking…';
    try {
      const r = await api('/v1/checks?dry_run=true', {method: 'POST',
        json: body()});
      if (mine !== seq) return;   // a newer edit is on its way
      status.replaceChildren('Live report: ', verdictBadge(r.verdict),
        ` on ${r.context.gpus} × ${r.context.gpu}`);
      put(live, reportBody(r, config.value));
      store.disabled = false;
    } catch (e) {
      if (mine !== seq) return;
      if (e instanceof AuthError) throw e;
      put(live, h('div', {class: 'problem', role: 'alert'},
        h('p', {}, h('strong', {}, 'This config cannot be checked: '),
          errorText(e))));
      status.textContent = e instanceof ApiError && e.status < 500 ?
        'Fix the config to see its report.' : 'The check failed.';
      store.disabled = true;
    }
  }

  function soon() {
    clearTimeout(timer);
    timer = setTimeout(() => { run().catch(onAuth); }, DEBOUNCE_MS);
  }

  function onAuth(e) {
    window.dispatchEvent(new CustomEvent('preflight-error', {detail: e}));
  }

  function load(f) {
    if (!f) return;
    if (f.size > MAX_FILE) {
      status.textContent = `${f.name} is larger than 1 MiB.`;
      return;
    }
    f.text().then((t) => {
      config.value = t;
      if (!name.value) name.value = f.name;
      soon();
    });
  }

  config.addEventListener('input', soon);
  for (const el of [nGpus, nodes, gpu]) {
    el.addEventListener('input', soon);
    el.addEventListener('change', soon);
  }
  file.addEventListener('change', () => load(file.files[0]));
  config.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    config.classList.add('drop');
  });
  config.addEventListener('dragleave', () => config.classList.remove('drop'));
  config.addEventListener('drop', (ev) => {
    ev.preventDefault();
    config.classList.remove('drop');
    load(ev.dataTransfer.files[0]);
  });

  const form = h('form', {class: 'try', id: 'try-form',
    'aria-label': 'Config to check'},
  field('Config (YAML)', config, 'Paste it here or drop a file on it. ' +
    'The report updates as you type; nothing is stored until you press ' +
    '"Store this check".'),
  field('Or open a file', file),
  h('div', {class: 'row'},
    field('GPUs', nGpus), field('Nodes', nodes), field('GPU type', gpu)),
  field('Name to store it under', name, 'e.g. the config file name; its ' +
    'history collects under this name'),
  h('div', {class: 'field actions'}, store),
  stored);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!form.reportValidity()) return;
    store.disabled = true;
    stored.textContent = 'Storing…';
    try {
      const c = await api('/v1/checks', {method: 'POST',
        json: {...body(), name: name.value}});
      stored.replaceChildren('Stored as ',
        h('a', {href: checkHref(c.id), id: 'stored-link'}, 'check ' + c.id),
        '.');
    } catch (e) {
      if (e instanceof AuthError) { onAuth(e); return; }
      stored.textContent = 'Not stored: ' + errorText(e);
    } finally {
      store.disabled = false;
    }
  });

  put(main, h('h1', {}, 'Try a config'), form, status, live);
}
