// ptxbench dashboard: fills the page named by <body data-page> from the
// dashboard's JSON API (proto3 JSON of the scheduler's ClientService
// answers) and keeps it current by polling. Every text from the data goes
// into the page as text (textContent, text nodes), never as markup: names,
// prompts, answers and kernels are whatever users and models wrote.
'use strict';

// --- small helpers ----------------------------------------------------------

// h('td', {class: 'num'}, 'text', node, ...): an element; strings become
// text nodes; attributes are set one by one (never from a markup string).
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value !== undefined && value !== null && value !== false) el.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const num = (v) => Number(v || 0);  // proto3 JSON writes 64-bit numbers as strings
const enc = encodeURIComponent;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const csrf = () => document.querySelector('meta[name="ptxb-csrf"]').content;

function usd(v) {
  const x = num(v);
  return '$' + (x === 0 ? '0' : x < 0.01 ? x.toPrecision(2) : x.toFixed(2));
}
function speedup(v) {
  const x = num(v);
  return x > 0 ? x.toFixed(2) + '×' : '–';
}
function when(ms) {
  const t = num(ms);
  return t > 0 ? new Date(t).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '–';
}
function ago(ms) {
  const s = Math.round((Date.now() - num(ms)) / 1000);
  return num(ms) > 0 ? (s <= 1 ? 'just now' : s + ' s ago') : '–';
}
function inSeconds(ms) {
  const s = Math.round((num(ms) - Date.now()) / 1000);
  return s >= 0 ? 'in ' + s + ' s' : s + ' s ago';
}
function stateBadge(state) {
  return h('span', {class: 'state state-' + String(state).toLowerCase()}, String(state));
}
function link(href, text) {
  return h('a', {href}, text);
}
function table(headers, rows, cls) {
  return h('table', {class: cls || 'grid'},
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', {}, x)))),
    h('tbody', {}, rows));
}
function pre(text, cls) {
  return h('pre', {class: cls || 'text'}, text);
}
// A <details> whose open state survives re-rendering, by `key`.
function details(key, summary, body, open) {
  return h('details', {'data-key': key, open: open ? '' : false}, h('summary', {}, summary), body);
}
// The id in the page's path: /experiments/<id>, /trajectories/<id>.
function pathId() {
  return decodeURIComponent(location.pathname.split('/')[2] || '');
}

function setStatus(text, isError) {
  const el = document.getElementById('status');
  if (!el) return;
  el.textContent = text || '';
  el.className = isError ? 'status error' : 'status';
}
function stamp() {
  document.getElementById('updated').textContent =
    'Updated ' + new Date().toLocaleTimeString() + ' · live';
}

// Replaces the children of `el`, keeping which <details> were open.
function render(el, ...children) {
  const open = new Set([...el.querySelectorAll('details[open]')].map((d) => d.dataset.key));
  const closed = new Set([...el.querySelectorAll('details:not([open])')].map((d) => d.dataset.key));
  el.replaceChildren(...children.flat());
  for (const d of el.querySelectorAll('details[data-key]')) {
    if (open.has(d.dataset.key)) d.open = true;
    if (closed.has(d.dataset.key)) d.open = false;
  }
}

// Fetches `url` every `everyMs()` ms and calls `show` with the parsed answer
// when it changed. A session that ended goes to the sign-in page.
async function poll(url, show, everyMs) {
  let last = null;
  for (;;) {
    const target = typeof url === 'function' ? url() : url;
    try {
      const r = await fetch(target, {headers: {Accept: 'application/json'}, cache: 'no-store'});
      if (r.status === 401) {
        location.assign('/signin');
        return;
      }
      const text = await r.text();
      if (!r.ok) {
        let message = r.statusText;
        try { message = JSON.parse(text).error; } catch (e) { /* not JSON */ }
        setStatus('HTTP ' + r.status + ': ' + message, true);
      } else {
        if (text !== last) {
          last = text;
          show(JSON.parse(text));
        }
        stamp();
      }
    } catch (e) {
      setStatus('The dashboard cannot be reached: ' + e.message, true);
    }
    await sleep(typeof everyMs === 'function' ? everyMs() : everyMs);
  }
}

// --- experiments --------------------------------------------------------------

function statesText(byState) {
  return Object.entries(byState || {})
    .filter(([, n]) => num(n) > 0)
    .map(([state, n]) => state + ' ' + num(n))
    .join(' · ');
}

function progressCell(p) {
  const total = num(p.total), done = num(p.terminal);
  return h('td', {class: 'progress-cell'},
    h('progress', {max: String(Math.max(total, 1)), value: String(done)}),
    ' ' + done + ' / ' + total);
}

function experimentRow(x) {
  const e = x.experiment, p = x.progress;
  return h('tr', {'data-experiment': e.experiment_id},
    h('td', {}, link('/experiments/' + enc(e.experiment_id), e.name),
      p.simulated ? h('span', {class: 'label'}, 'SIMULATED') : null,
      h('div', {class: 'sub'}, e.experiment_id)),
    h('td', {}, when(e.created_unix_ms)),
    h('td', {}, e.eval_mode),
    progressCell(p),
    h('td', {class: 'states'}, statesText(p.by_state)),
    h('td', {class: 'num'}, String(num(p.correct))),
    h('td', {class: 'num'}, String(num(p.target_met))),
    h('td', {class: 'num'}, usd(p.cost_usd)));
}

function showExperiments(main) {
  const list = h('div', {id: 'experiments'});
  render(main, h('h1', {}, 'Experiments'), h('p', {class: 'status', id: 'status'}), list);
  poll('/api/experiments', (data) => {
    setStatus('');
    const rows = (data.experiments || []).map(experimentRow);
    if (rows.length === 0) {
      render(list, h('p', {class: 'empty'}, 'No experiments yet. Submit one with ',
        h('code', {}, 'ptxbench submit SPEC'), '.'));
      return;
    }
    render(list, table(['Experiment', 'Created', 'Eval', 'Progress', 'States', 'Correct',
      'Target met', 'Cost'], rows));
  }, 2000);
}

// --- one experiment -----------------------------------------------------------

function trajectoryRow(t) {
  return h('tr', {'data-trajectory': t.trajectory_id},
    h('td', {}, link('/trajectories/' + enc(t.trajectory_id), t.trajectory_id)),
    h('td', {}, t.model), h('td', {}, t.definition), h('td', {}, t.prompt_tag),
    h('td', {class: 'num'}, String(num(t.sample_index))),
    h('td', {}, stateBadge(t.state),
      t.failure_class && t.failure_class !== 'FAILURE_CLASS_UNSPECIFIED'
        ? ' ' + t.failure_class : null),
    h('td', {class: 'num'}, num(t.turns_completed) + ' / ' + num(t.num_turns)),
    h('td', {}, t.has_correct_kernel ? 'yes' : 'no'),
    h('td', {class: 'num'}, speedup(t.best_speedup)),
    h('td', {class: 'num'}, usd(t.cost_usd)),
    h('td', {class: 'reason'}, t.reason || ''));
}

function card(label, value, extra) {
  return h('div', {class: 'card'}, h('div', {class: 'card-label'}, label),
    h('div', {class: 'card-value'}, value), extra || null);
}

// The report page (the same as `ptxbench report --html`) in a frame, made
// as tall as its content, reloaded when the experiment moved on (at most
// every 10 s, and once more when it finished).
function reportFrame(id) {
  const frame = h('iframe', {class: 'report', title: 'Report', id: 'report',
    sandbox: 'allow-same-origin', src: '/experiments/' + enc(id) + '/report'});
  frame.addEventListener('load', () => {
    const doc = frame.contentDocument;
    if (doc && doc.documentElement) {
      frame.style.height = (doc.documentElement.scrollHeight + 24) + 'px';
    }
  });
  let shown = null, pending = null, at = Date.now();
  frame.progressed = (signature) => {
    if (shown === null) shown = signature;
    if (signature !== shown) pending = signature;
    if (pending !== null && Date.now() - at >= 10000) {
      shown = pending;
      pending = null;
      at = Date.now();
      frame.src = '/experiments/' + enc(id) + '/report?at=' + at;
    }
  };
  return frame;
}

function cancelButton(id, message) {
  const button = h('button', {type: 'button', id: 'cancel', class: 'danger'}, 'Cancel experiment');
  let armed = false, timer = null;
  const disarm = () => {
    armed = false;
    button.textContent = 'Cancel experiment';
    clearTimeout(timer);
  };
  button.addEventListener('click', async () => {
    if (!armed) {  // a second click confirms: cancelling is final
      armed = true;
      button.textContent = 'Click again to cancel every live trajectory';
      timer = setTimeout(disarm, 5000);
      return;
    }
    disarm();
    message.className = 'action-message';
    message.textContent = 'Cancelling…';
    try {
      const r = await fetch('/api/experiments/' + enc(id) + '/cancel',
        {method: 'POST', headers: {'X-CSRF-Token': csrf()}, cache: 'no-store'});
      let body = {};
      try { body = await r.json(); } catch (e) { /* not JSON */ }
      if (r.ok) {
        message.textContent = 'Cancelled ' + num(body.cancelled) + ' trajectories.';
      } else {
        message.className = 'action-message error';
        message.textContent = 'Refused (HTTP ' + r.status + '): ' + (body.error || r.statusText);
      }
    } catch (e) {
      message.className = 'action-message error';
      message.textContent = 'The dashboard cannot be reached: ' + e.message;
    }
  });
  return button;
}

function showExperiment(main) {
  const id = pathId();
  const title = h('h1', {}, id), meta = h('p', {class: 'meta'});
  const message = h('span', {class: 'action-message', id: 'action-message', role: 'status'});
  const cards = h('div', {class: 'cards', id: 'cards'});
  const frame = reportFrame(id);
  const rows = h('div', {id: 'trajectories'});
  const pager = h('div', {class: 'pager'});
  const pageSize = 200;
  let offset = 0, total = 0;
  const pageButton = (label, delta) => {
    const b = h('button', {type: 'button'}, label);
    b.addEventListener('click', () => {
      offset = Math.max(0, Math.min(offset + delta, Math.max(0, total - 1)));
    });
    return b;
  };
  render(main, title, meta, h('p', {class: 'status', id: 'status'}),
    h('div', {class: 'actions'}, cancelButton(id, message), message), cards,
    h('h2', {}, 'Trajectories'), pager, rows,
    h('h2', {}, 'Report'),
    h('p', {class: 'hint'}, 'pass@turn, outcomes by turn and speedups, as ',
      h('code', {}, 'ptxbench report --html'), ' draws them (docs/REPORTS.md).'),
    frame);
  let finished = false;
  poll('/api/experiments/' + enc(id), (data) => {
    const e = data.experiment, p = data.progress;
    setStatus('');
    document.title = e.name + ' · ptxbench';
    title.textContent = e.name;
    meta.textContent = [e.experiment_id, e.eval_mode, 'created ' + when(e.created_unix_ms),
      'priority ' + e.priority, 'up to ' + e.num_turns + ' turns',
      p.simulated ? 'SIMULATED results' : null].filter(Boolean).join(' · ');
    render(cards,
      card('Done', num(p.terminal) + ' / ' + num(p.total),
        h('progress', {max: String(Math.max(num(p.total), 1)), value: String(num(p.terminal))})),
      card('Turns', String(num(p.turns_completed))),
      card('Correct', String(num(p.correct))),
      card('Target met', String(num(p.target_met))),
      card('Cost', usd(p.cost_usd)),
      card('Tasks', num(p.tasks_queued) + ' queued · ' + num(p.tasks_leased) + ' running'),
      card('States', statesText(p.by_state) || '–'));
    finished = num(p.terminal) === num(p.total);
    frame.progressed(num(p.turns_completed) + '/' + num(p.terminal));
  }, 2000);
  poll(() => '/api/experiments/' + enc(id) + '/trajectories?limit=' + pageSize + '&offset=' + offset,
    (data) => {
      total = num(data.total);
      const list = data.trajectories || [];
      render(pager, pageButton('‹ Previous', -pageSize), ' ',
        h('span', {}, total === 0 ? 'none' : (offset + 1) + '–' + (offset + list.length) +
          ' of ' + total), ' ', pageButton('Next ›', pageSize));
      render(rows, table(['Trajectory', 'Model', 'Definition', 'Tag', 'Sample', 'State', 'Turns',
        'Correct', 'Best min speedup', 'Cost', 'Reason'], list.map(trajectoryRow)));
    }, () => (finished ? 10000 : 2000));
}

// --- one trajectory -----------------------------------------------------------

function workloadRow(t) {
  const axes = Object.entries(t.axes || {}).map(([k, v]) => k + '=' + v).join(' ');
  return h('tr', {},
    h('td', {}, t.workload_uuid, axes ? h('div', {class: 'sub'}, axes) : null),
    h('td', {}, stateBadge(t.status)),
    h('td', {class: 'num'}, num(t.latency_ms) > 0 ? num(t.latency_ms).toFixed(4) : '–'),
    h('td', {class: 'num'}, num(t.reference_latency_ms) > 0
      ? num(t.reference_latency_ms).toFixed(4) : '–'),
    h('td', {class: 'num'}, speedup(t.speedup)),
    h('td', {}, t.reference || ''),
    h('td', {class: 'num'}, num(t.max_abs_error).toPrecision(3)),
    h('td', {class: 'num'}, (num(t.matched_ratio) * 100).toFixed(1) + '%'),
    h('td', {class: 'reason'}, (t.errors || []).join('\n')));
}

function evaluation(turn, key) {
  const ev = turn.eval;
  if (!ev) {
    return h('p', {class: 'meta'}, turn.kernel_source ? 'Evaluation pending.' : 'Not evaluated.');
  }
  return h('div', {class: 'eval'},
    h('h3', {}, 'Evaluation ', stateBadge(ev.status),
      ev.simulated ? h('span', {class: 'label'}, 'SIMULATED') : null),
    h('p', {class: 'meta'}, ['min speedup ' + speedup(ev.min_speedup),
      num(ev.wall_time_ms) + ' ms', ev.worker_id, ev.gpu_model, ev.toolkit_version]
      .filter(Boolean).join(' · ')),
    ev.error ? pre(ev.error, 'text error') : null,
    (ev.traces || []).length === 0 ? null : table(['Workload', 'Status', 'Latency ms',
      'Reference ms', 'Speedup', 'Reference', 'Max abs err', 'Matched', 'Errors'],
    ev.traces.map(workloadRow), 'grid workloads'),
    ev.compile_log ? details(key + '-compile', 'Compile log', pre(ev.compile_log)) : null);
}

function turnSection(turn) {
  const r = turn.response || {}, u = r.usage || {}, i = num(turn.index);
  const key = 'turn-' + i;
  return h('section', {class: 'turn', 'data-turn': String(i)},
    h('h2', {}, 'Turn ' + (i + 1) + ' ', h('span', {class: 'sub'}, turn.state)),
    r.provider ? h('p', {class: 'meta'}, [r.provider, r.simulated ? 'SIMULATED answer' : null,
      num(u.input_tokens) + ' in / ' + num(u.output_tokens) + ' out tokens', usd(r.cost_usd),
      num(r.latency_ms) + ' ms', r.finish_reason].filter(Boolean).join(' · ')) : null,
    r.reasoning ? details(key + '-reasoning', 'Reasoning', pre(r.reasoning)) : null,
    r.text ? details(key + '-answer', 'Answer', pre(r.text, 'text answer')) : null,
    h('h3', {}, 'Kernel'),
    turn.kernel_source ? pre(turn.kernel_source, 'kernel')
      : h('p', {class: 'meta'}, r.text ? 'No kernel in the answer.' : 'Waiting for the model.'),
    evaluation(turn, key),
    turn.feedback ? h('div', {}, h('h3', {}, 'Feedback'), pre(turn.feedback, 'text feedback'))
      : null);
}

// Agent mode: how the session ended, what it spent, and what it left (each
// record's bytes come base64-encoded, as proto JSON has them).
function fromBase64(b64) {
  try {
    const bytes = Uint8Array.from(atob(b64 || ''), (c) => c.charCodeAt(0));
    return new TextDecoder().decode(bytes);
  } catch (e) {
    return '(not text)';
  }
}

// A record's text, fetched when its <details> is first opened (a session's
// records are up to 16 MiB: the page's poll carries only their names).
const recordTexts = new Map();
function recordDetails(id, r) {
  const key = id + '\n' + r.name;
  const body = pre(recordTexts.has(key) ? recordTexts.get(key) : 'loading…');
  const d = details('record-' + r.name, r.name + ' (' + num(r.size) + ' B' +
    (r.truncated ? ', cut' : '') + ')', body);
  d.addEventListener('toggle', async () => {
    if (!d.open || recordTexts.has(key)) return;
    try {
      const resp = await fetch('/api/trajectories/' + enc(id) + '/record?name=' +
        encodeURIComponent(r.name), {headers: {Accept: 'application/json'}, cache: 'no-store'});
      const data = await resp.json();
      if (!resp.ok) throw new Error(data.error || resp.statusText);
      const got = ((data.trajectory || {}).agent || {}).records || [];
      recordTexts.set(key, fromBase64((got[0] || {}).content));
      body.textContent = recordTexts.get(key);
    } catch (e) {
      body.textContent = 'The record cannot be read: ' + e.message;
    }
  });
  return d;
}

function agentSection(id, a) {
  const t = a.total || {}, u = t.usage || {};
  const tokens = num(u.input_tokens) + num(u.output_tokens);
  const records = (a.records || []).map((r) => recordDetails(id, r));
  return h('section', {class: 'agent'},
    h('h2', {}, 'Agent session'),
    h('p', {}, (a.end || 'did not run its course') + (a.reason ? ': ' + a.reason : '')),
    h('p', {class: 'meta'}, [num(a.evaluations) + ' evaluations',
      num(t.model_calls) + ' model calls', num(tokens) + ' tokens', usd(t.cost_usd),
      Math.round(num(a.wall_ms) / 1000) + ' s, ' + Math.round(num(a.blocked_ms) / 1000) +
      ' s of them waiting for evaluations'].join(' · ')),
    records);
}

function showTrajectory(main) {
  const id = pathId();
  const body = h('div', {id: 'trajectory'});
  render(main, h('h1', {}, id), h('p', {class: 'status', id: 'status'}), body);
  let live = true;
  poll('/api/trajectories/' + enc(id), (data) => {
    const t = data.trajectory, s = t.summary;
    setStatus('');
    live = s.state === 'AWAITING_MODEL' || s.state === 'AWAITING_EVAL' || s.state === 'AWAITING_AGENT';
    render(body,
      h('p', {class: 'meta'}, 'Experiment ', link('/experiments/' + enc(s.experiment_id),
        s.experiment_id), ' · ', [s.model, s.definition, s.prompt_tag,
        'sample ' + num(s.sample_index), num(s.turns_completed) + ' / ' + num(s.num_turns) +
        ' turns', 'target ' + speedup(s.target_speedup), 'best ' + speedup(s.best_speedup),
        usd(s.cost_usd)].join(' · ')),
      h('p', {}, stateBadge(s.state), s.reason ? ' ' + s.reason : null),
      details('system', 'System prompt', pre(t.system_prompt)),
      details('task', 'Task prompt', pre(t.task_prompt)),
      t.agent ? agentSection(id, t.agent) : null,
      (t.turns || []).map(turnSection));
  }, () => (live ? 2000 : 15000));
}

// --- executors ----------------------------------------------------------------

function gpuLine(g) {
  const gib = num(g.memory_bytes) / (1 << 30);
  return h('div', {class: 'gpu'}, 'GPU ' + num(g.index) + ': ' + g.model + ' (' +
    [g.sm_arch, gib > 0 ? gib.toFixed(0) + ' GiB' : null].filter(Boolean).join(', ') + ') ',
  h('span', {class: g.healthy ? 'ok' : 'bad'}, g.healthy ? 'healthy' : 'UNHEALTHY'));
}

function heldLine(t) {
  return h('div', {class: 'held', 'data-task': t.task_id},
    h('span', {class: 'kind'}, t.kind), ' ',
    link('/trajectories/' + enc(t.trajectory_id), t.trajectory_id),
    ' turn ' + (num(t.turn) + 1) + ' · attempt ' + num(t.attempt) + ' · ' +
    (t.kind === 'EVAL' ? t.definition : t.model) + ' · lease ends ' +
    inSeconds(t.lease_deadline_unix_ms));
}

function executorRow(x) {
  const c = x.capabilities || {};
  const capacity = [h('div', {}, num(c.slots) + ' slots')];
  for (const g of c.gpus || []) capacity.push(gpuLine(g));
  if (x.kind === 'GATEWAY' && num(c.agent_slots) > 0) {
    capacity.push(h('div', {}, num(c.agent_slots) + ' agent sessions: ' +
      (c.agent_clis || []).map((cli) => cli.name + ' ' + cli.version).join(', ')));
  } else if (x.kind === 'GATEWAY') {
    capacity.push(h('div', {}, c.serves_any_model ? 'any model' : (c.models || []).join(', ')));
  }
  const held = (x.held || []).map(heldLine);
  return h('tr', {'data-executor': x.executor_id},
    h('td', {}, x.name || '–', c.simulated ? h('span', {class: 'label'}, 'SIMULATED') : null,
      h('div', {class: 'sub'}, x.executor_id)),
    h('td', {}, x.kind),
    h('td', {}, h('span', {class: 'status-' + x.status}, x.status)),
    h('td', {}, ago(x.last_seen_unix_ms)),
    h('td', {}, capacity),
    h('td', {}, held.length ? held : h('span', {class: 'sub'}, 'idle')));
}

function showExecutors(main) {
  const list = h('div', {id: 'executors'});
  render(main, h('h1', {}, 'Executors'), h('p', {class: 'status', id: 'status'}), list);
  poll('/api/executors', (data) => {
    setStatus('');
    const rows = (data.executors || []).map(executorRow);
    render(list, rows.length === 0
      ? h('p', {class: 'empty'}, 'No worker or gateway has registered yet.')
      : table(['Executor', 'Kind', 'Status', 'Last seen', 'Capacity', 'Doing now'], rows));
  }, 2000);
}

// --- start --------------------------------------------------------------------

document.addEventListener('DOMContentLoaded', () => {
  const main = document.getElementById('main');
  const pages = {experiments: showExperiments, experiment: showExperiment,
    trajectory: showTrajectory, executors: showExecutors};
  const show = pages[document.body.dataset.page];
  if (show) show(main);
});
