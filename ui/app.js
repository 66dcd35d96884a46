// ui/app.js: the pages' entry point.  The daemon serves the same HTML for
// every page route; this reads location.pathname, draws the page from the
// JSON API, and asks for a token (kept in sessionStorage for this browser
// session only, sent as Authorization: Bearer) when the API answers 401.
import {h, put, token, setToken, AuthError, errorText} from './lib.js';
import {checksPage} from './checks.js';
import {checkPage} from './check.js';
import {historyPage} from './history.js';
import {diffPage} from './diff.js';
import {tryPage} from './try.js';
import {rulesPage, rulePage} from './rules.js';

const ROUTES = [
  [/^\/$/, checksPage, 'checks'],
  [/^\/checks\/([^/]+)$/, checkPage, 'checks'],
  [/^\/checks\/([^/]+)\/diff\/([^/]+)$/, diffPage, 'checks'],
  [/^\/configs\/([^/]+)$/, historyPage, 'checks'],
  [/^\/try$/, tryPage, 'try'],
  [/^\/rules$/, rulesPage, 'rules'],
  [/^\/rules\/([^/]+)$/, rulePage, 'rules'],
];

const main = document.getElementById('main');

function session() {
  const box = document.getElementById('session');
  if (!token()) {
    box.replaceChildren();
    return;
  }
  put(box, h('button', {type: 'button', class: 'linkish', onclick: () => {
    setToken(null);
    location.reload();
  }}, 'Forget token'));
}

// The token form, with why it is shown.
function askToken(e) {
  const had = token() !== null;
  setToken(null);
  session();
  const input = h('input', {id: 'token', type: 'password', required: true,
    autocomplete: 'off', spellcheck: 'false',
    'aria-describedby': 'token-why'});
  const form = h('form', {class: 'token card', id: 'token-form'},
    h('h1', {}, 'Sign in'),
    h('p', {id: 'token-why', role: 'alert', class: 'problem'},
      had ? 'The server refused this token (401 Unauthorized). ' :
        'This server needs an access token (401 Unauthorized). ',
      'Ask an administrator for one (preflight token create --team NAME). ' +
      'It is kept only in this browser tab until you close it.'),
    e && e.problem && e.problem.detail ?
      h('p', {class: 'muted'}, 'Server: ', e.problem.detail) : null,
    h('div', {class: 'field'}, h('label', {for: 'token'}, 'Access token'),
      input),
    h('div', {class: 'field actions'},
      h('button', {type: 'submit'}, 'Use this token')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const t = input.value.trim();
    if (!t) return;
    setToken(t);
    render();
  });
  put(main, form);
  done('auth');
  input.focus();
}

function showError(e) {
  if (e instanceof AuthError) {
    askToken(e);
    return;
  }
  put(main, h('h1', {}, 'Something went wrong'),
    h('p', {role: 'alert', class: 'problem'}, errorText(e)),
    h('p', {}, h('a', {href: location.pathname + location.search},
      'Try again')));
  done('error');
}

// Tests and screen readers: the page is drawn.
function done(state) {
  document.body.dataset.state = state;
}

async function render() {
  document.body.dataset.state = 'loading';
  session();
  const path = location.pathname;
  for (const [re, page, nav] of ROUTES) {
    const m = re.exec(path);
    if (!m) continue;
    for (const a of document.querySelectorAll('[data-nav]')) {
      if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    try {
      await page(main, ...m.slice(1).map(decodeURIComponent));
      session();
      done('ready');
    } catch (e) {
      showError(e);
    }
    return;
  }
  put(main, h('h1', {}, 'Page not found'),
    h('p', {}, h('a', {href: '/'}, 'All checks')));
  done('error');
}

// Errors from event handlers after the first draw (the try page's live
// checks): a 401 brings the token form back.
window.addEventListener('preflight-error', (ev) => showError(ev.detail));

render();
