// The operator's dashboard: reads the /v1 API with the sign-in cookie and
// follows the live stream. Every value from the server is put in the page
// as text, never as markup.
'use strict';

const view = document.getElementById('view');
const FEED_LIMIT = 500;
const state = { feed: [], filters: { agent: '', decision: '', policy: '' }, stream: null };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'class') node.className = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// The page key the server gave at sign-in. It is kept per origin (another
// service on this host never sees it, unlike the session cookie) and sent
// with every request made with the session.
const PAGE_KEY = 'sondera-page-key';
function pageKey() {
  return localStorage.getItem(PAGE_KEY) || '';
}

class SignInNeeded extends Error {}

// The server did not answer at all (it is down, restarting, or the network is).
class Unreachable extends Error {
  constructor() { super('The server cannot be reached; trying again in a few seconds.'); }
}

async function api(path, options = {}) {
  const method = options.method || 'GET';
  const headers = {};
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  headers['x-sondera-page-key'] = pageKey();
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch (error) {
    throw new Unreachable();
  }
  if (response.status === 401) throw new SignInNeeded();
  if (response.status === 204) return null;
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error((body.error && body.error.message) || response.statusText);
  return body;
}

function say(text) {
  const status = document.getElementById('status');
  status.textContent = text;
  setTimeout(() => { if (status.textContent === text) status.textContent = ''; }, 4000);
}

function time(iso) {
  return iso ? new Date(iso).toLocaleString() : '';
}

function decisionLabel(decision) {
  return el('span', { class: `decision ${decision}` }, decision);
}

/** The step in a few words. */
// One line (or a few) for any payload, every kind of the wire format
// (schema/event.schema.json) by its own field names.
function describe(payload) {
  const json = (value) => JSON.stringify(value === undefined ? null : value);
  switch (payload.type) {
    case 'tool_call': return `${payload.tool} ${json(payload.arguments)}`;
    case 'shell_command': return `$ ${payload.command}${payload.working_dir ? `  (in ${payload.working_dir})` : ''}`;
    case 'web_fetch': return `${payload.method || 'GET'} ${payload.url}${payload.body ? `\n${payload.body}` : ''}`;
    case 'file_operation': return `${payload.operation} ${payload.path}${payload.content ? `\n${payload.content}` : ''}`;
    case 'prompt': return `${payload.role}: ${payload.content}`;
    case 'thought': return payload.content || '';
    case 'tool_output': return payload.success ? `returned ${json(payload.output)}` : `raised: ${payload.error || json(payload.output)}`;
    case 'shell_command_output': return `exit ${payload.exit_code}: ${payload.stdout || ''}${payload.stderr ? `\n${payload.stderr}` : ''}`;
    case 'web_fetch_output': return `${payload.code} ${payload.url}: ${payload.result || ''}`;
    case 'file_operation_result': return payload.success ? (payload.content ?? 'ok') : `failed: ${payload.error || ''}`;
    case 'started': return `started${payload.session_id ? ` (session ${payload.session_id})` : ''}${payload.task ? `: ${payload.task}` : ''}`;
    case 'completed': return `completed${payload.summary ? `: ${payload.summary}` : ''}`;
    case 'failed': return `failed: ${payload.reason}`;
    case 'terminated': return `terminated by ${payload.terminated_by.kind}:${payload.terminated_by.id}: ${payload.reason}`;
    case 'suspended': return `suspended: ${payload.reason}`;
    case 'resumed': return `resumed by ${payload.resumed_by.kind}:${payload.resumed_by.id}`;
    case 'adjudicated': return `${payload.decision}: ${payload.reason || ''}`;
    case 'snapshot': return `in ${payload.working_dir || '?'}${payload.git_branch ? ` on ${payload.git_branch}` : ''}${(payload.open_files || []).length ? `, open: ${payload.open_files.join(', ')}` : ''}`;
    default: return payload.type;
  }
}

// The whole action an approval is about, as the person deciding needs it:
// a command in full, what a write puts in the file, what an edit replaces
// and with what, a request's method and body, arguments laid out.
function actionDetail(action) {
  const block = (label, text, cls) => [el('div', { class: 'muted' }, label), el('pre', { class: cls || '' }, text)];
  switch (action.type) {
    case 'shell_command':
      return [block('Command', action.command), action.working_dir ? el('p', { class: 'muted' }, `in ${action.working_dir}`) : ''];
    case 'file_operation': {
      const parts = [el('p', {}, el('strong', {}, action.operation), ' ', el('code', {}, action.path))];
      if (action.old_content != null) parts.push(block('Replaces', action.old_content, 'removed'));
      if (action.content != null) parts.push(block(action.operation === 'edit' ? 'With' : 'Content written', action.content, 'added'));
      return parts;
    }
    case 'web_fetch':
      return [el('p', {}, el('strong', {}, action.method || 'GET'), ' ', el('code', {}, action.url)),
        action.prompt ? block('Asking the page', action.prompt) : '',
        action.body ? block('Body sent', action.body) : ''];
    case 'tool_call':
      return [el('p', {}, el('strong', {}, action.tool)), block('Arguments', JSON.stringify(action.arguments, null, 2))];
    default:
      return [el('pre', {}, describe(action))];
  }
}

// What the shell analysis finds in the command: programs, hosts, paths
// outside the workspace, risks with the words that show them.
function shellAnalysis(approval) {
  const node = el('dl', { class: 'analysis' });
  api(`/v1/approvals/${encodeURIComponent(approval.id)}/analysis`).then((a) => {
    const row = (label, values) => (values && values.length
      ? [el('dt', {}, label), el('dd', {}, values.join(', '))] : []);
    node.replaceChildren(...[
      row('Programs', a.programs),
      row('Hosts', a.hosts),
      row('Deletes outside the workspace', a.paths_outside_workspace),
      row('Risks', (a.risks || []).map((r) => `${r.kind} (${r.evidence})`)),
      a.privileged ? row('Privileges', ['runs as another user (sudo, doas, ...)']) : [],
      a.unparsable ? row('Not fully analysed', [a.unparsable]) : [],
    ].flat());
  }).catch(() => node.replaceChildren(el('dd', { class: 'muted' }, 'The analysis could not be loaded.')));
  return node;
}

// How long an approval has waited and how long it has left, kept current.
function clock(approval) {
  const node = el('span', { class: 'clock' });
  const tick = () => {
    if (!node.isConnected && node.dataset.started) return;
    node.dataset.started = '1';
    const waited = Math.max(0, Math.round((Date.now() - Date.parse(approval.created_at)) / 1000));
    const left = Math.round((Date.parse(approval.expires_at) - Date.now()) / 1000);
    node.textContent = `waiting ${span(waited)} · ${left > 0 ? `${span(left)} left before it is denied` : 'past its deadline'}`;
    setTimeout(tick, 1000);
  };
  tick();
  return node;
}

function span(seconds) {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

function policyList(policies) {
  if (!policies || policies.length === 0) return el('span', { class: 'muted' }, 'no policy');
  return el('ul', {}, policies.map((p) => el('li', {},
    el('code', {}, p.policy_id), p.description ? ` — ${p.description}` : '')));
}

// ---- Approvals -------------------------------------------------------------

async function approvalsView() {
  const page = await api('/v1/approvals?status=pending');
  setPending(page.items.length);
  return el('section', { 'aria-labelledby': 'approvals-title' },
    el('h2', { id: 'approvals-title' }, 'Pending approvals'),
    el('div', { id: 'approval-cards' }, page.items.map(approvalCard)),
    el('p', { class: 'muted', id: 'nothing-waiting', hidden: page.items.length > 0 }, 'Nothing is waiting for a decision.'));
}

// Puts one approval's change into the open approvals view in place: a new
// one is added on top, a settled one taken away, and every other card
// (with whatever reason is being typed in it) stays as it is.
function updateCard(approval) {
  const cards = document.getElementById('approval-cards');
  if (!cards) return;
  const existing = cards.querySelector(`article[data-approval="${CSS.escape(approval.id)}"]`);
  if (approval.status === 'pending' && !existing) cards.prepend(approvalCard(approval));
  if (approval.status !== 'pending' && existing) existing.remove();
  const count = cards.querySelectorAll('article[data-approval]').length;
  document.getElementById('nothing-waiting').hidden = count > 0;
  setPending(count);
}

function approvalCard(approval) {
  const reason = el('input', { type: 'text', 'aria-label': 'Reason (optional)', placeholder: 'Reason (optional)' });
  const decide = (decision) => async () => {
    try {
      await api(`/v1/approvals/${encodeURIComponent(approval.id)}/decision`, {
        method: 'POST', body: { decision, reason: reason.value || null },
      });
      say(`Approval ${decision === 'deny' ? 'denied' : 'approved'}`);
      updateCard({ ...approval, status: 'decided' });
    } catch (error) {
      say(error.message);
    }
  };
  const once = !approval.shape;
  const history = el('div', { class: 'history' }, el('p', { class: 'muted' }, 'Loading the trajectory…'));
  trajectorySoFar(approval).then((node) => history.replaceChildren(node)).catch(() => history.replaceChildren());
  return el('article', { class: 'card escalate', 'data-approval': approval.id },
    el('h3', {}, `${approval.agent_id} wants to run`),
    el('div', { class: 'action' }, actionDetail(approval.action),
      approval.action.type === 'shell_command' ? shellAnalysis(approval) : ''),
    el('p', { class: 'muted' }, clock(approval)),
    el('p', {}, approval.verdict.reason || ''),
    policyList(approval.verdict.policies),
    el('p', { class: 'muted' },
      `Session ${approval.session_id || '-'} · `,
      el('a', { href: `#/trajectory/${encodeURIComponent(approval.trajectory_id)}` }, `trajectory step ${approval.seq}`),
      ` · expires ${time(approval.expires_at)}`),
    history,
    el('div', { class: 'decide', role: 'group', 'aria-label': 'Decision' },
      reason,
      el('button', { class: 'deny', onclick: decide('deny') }, 'Deny'),
      el('button', { class: 'approve', onclick: decide('once') }, 'Approve once'),
      el('button', { class: 'approve', onclick: decide('session'), disabled: once, title: once ? 'This step can be approved once only' : undefined }, 'Approve for session'),
      el('button', {
        class: 'approve',
        onclick: () => {
          const shape = `${approval.agent_id} may do this kind of step from now on, in every session, without asking.`;
          if (window.confirm(`${shape} Approve always?`)) decide('always')();
        },
        disabled: once,
        title: once ? 'This step can be approved once only' : undefined,
      }, 'Approve always')));
}

async function trajectorySoFar(approval) {
  const detail = await api(`/v1/trajectories/${encodeURIComponent(approval.trajectory_id)}`);
  const recent = detail.events.filter((e) => e.seq <= approval.seq).slice(-6);
  return el('details', {}, el('summary', {}, `The trajectory so far (${approval.seq + 1} steps)`),
    el('ol', { start: recent.length ? recent[0].seq : 0 }, recent.map((e) => el('li', {},
      e.adjudication ? decisionLabel(e.adjudication.decision) : '', ' ', describe(e.event.payload)))));
}

function setPending(count) {
  document.getElementById('pending-count').textContent = count ? String(count) : '';
}

// ---- Live feed -------------------------------------------------------------

function feedView() {
  const input = (name, label) => el('label', {}, label, el('input', {
    type: 'text', value: state.filters[name], 'data-filter': name,
    oninput: (e) => { state.filters[name] = e.target.value.trim(); renderFeed(); },
  }));
  const decision = el('select', {
    'data-filter': 'decision',
    onchange: (e) => { state.filters.decision = e.target.value; renderFeed(); },
  }, ['', 'allow', 'deny', 'escalate'].map((d) => el('option', { value: d, selected: state.filters.decision === d }, d || 'any')));
  return el('section', { 'aria-labelledby': 'feed-title' },
    el('h2', { id: 'feed-title' }, 'Live feed'),
    el('div', { class: 'filters' }, input('agent', 'Agent'), el('label', {}, 'Decision', decision), input('policy', 'Policy')),
    el('table', { id: 'feed' },
      el('thead', {}, el('tr', {}, ['Time', 'Agent', 'Trajectory', 'Step', 'Decision', 'Policies'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {})));
}

function shown(item) {
  const { agent, decision, policy } = state.filters;
  if (agent && !item.agent.includes(agent)) return false;
  if (decision && item.decision !== decision) return false;
  if (policy && !item.policies.some((p) => p.includes(policy))) return false;
  return true;
}

function renderFeed() {
  const body = document.querySelector('#feed tbody');
  if (!body) return;
  body.replaceChildren(...state.feed.filter(shown).map((item) => el('tr', { class: item.decision },
    el('td', { 'data-label': 'Time' }, time(item.at)),
    el('td', { 'data-label': 'Agent' }, item.agent),
    el('td', { 'data-label': 'Trajectory' }, el('a', { href: `#/trajectory/${encodeURIComponent(item.trajectory)}` }, `${item.trajectory.slice(0, 8)}#${item.seq}`)),
    el('td', { 'data-label': 'Step' }, item.step),
    el('td', { 'data-label': 'Decision' }, decisionLabel(item.decision), item.reason ? el('div', { class: 'muted' }, item.reason) : ''),
    el('td', { 'data-label': 'Policies' }, item.policies.join(', ')))));
}

function follow() {
  if (state.stream) return;
  const stream = new EventSource(`/v1/events/stream?page_key=${encodeURIComponent(pageKey())}`);
  state.stream = stream;
  stream.addEventListener('event', (message) => {
    const data = JSON.parse(message.data);
    const verdict = data.adjudication || {};
    state.feed.unshift({
      at: data.event.timestamp,
      agent: data.event.agent.id,
      trajectory: data.event.trajectory_id,
      seq: data.seq,
      step: describe(data.event.payload),
      decision: verdict.decision || 'allow',
      reason: verdict.decision && verdict.decision !== 'allow' ? verdict.reason : '',
      policies: (verdict.policies || []).map((p) => p.policy_id),
    });
    state.feed.length = Math.min(state.feed.length, FEED_LIMIT);
    renderFeed();
  });
  stream.addEventListener('approval', (message) => {
    const approval = JSON.parse(message.data);
    if (approval.status === 'pending') say(`${approval.agent_id} is waiting for a decision`);
    if (currentView() === 'approvals') updateCard(approval);
    else api('/v1/approvals?status=pending').then((p) => setPending(p.items.length)).catch(() => {});
  });
  stream.addEventListener('error', () => {
    // The browser reconnects by itself. A stream the server closed for good
    // (signed out here or in another tab, the session expired, the token
    // removed) asks to sign in again; any other is opened again.
    if (stream.readyState === EventSource.CLOSED) {
      state.stream = null;
      api('/session').then(() => setTimeout(follow, 1000)).catch((error) => {
        if (error instanceof SignInNeeded) signIn();
        else setTimeout(follow, 1000);
      });
    }
  });
}

// ---- Agents ----------------------------------------------------------------

async function agentsView() {
  const [agents, trajectories] = await Promise.all([
    api('/v1/agents?page_size=1000'),
    api('/v1/trajectories?page_size=1000'),
  ]);
  const mix = {};
  for (const t of trajectories.items) {
    const m = mix[t.agent_id] || (mix[t.agent_id] = { trajectories: 0, steps: 0, denied: 0, escalated: 0 });
    m.trajectories += 1;
    m.steps += t.state.step_count || 0;
    m.denied += t.state.denial_count || 0;
    m.escalated += t.state.escalation_count || 0;
  }
  return el('section', { 'aria-labelledby': 'agents-title' },
    el('h2', { id: 'agents-title' }, 'Agents'),
    el('div', { class: 'grid' }, agents.items.map((record) => agentCard(record, mix[record.agent.id]))));
}

function agentCard(record, mix) {
  const agent = record.agent;
  const card = agent.card || {};
  const tools = card.tools || [];
  const subAgents = card.sub_agents || [];
  const m = mix || { trajectories: 0, steps: 0, denied: 0, escalated: 0 };
  return el('article', { class: 'card', 'data-agent': agent.id },
    el('h3', {}, agent.id, el('span', { class: 'muted' }, ` · ${agent.provider}`)),
    el('div', { class: 'kv' },
      el('span', {}, 'Trajectories'), el('span', {}, String(m.trajectories)),
      el('span', {}, 'Steps judged'), el('span', {}, String(m.steps)),
      el('span', {}, 'Decisions'), el('span', {},
        decisionLabel('allow'), ` ${Math.max(0, m.steps - m.denied - m.escalated)} `,
        decisionLabel('deny'), ` ${m.denied} `, decisionLabel('escalate'), ` ${m.escalated}`),
      el('span', {}, 'Last seen'), el('span', {}, time(record.last_seen))),
    el('h3', {}, 'Tools'),
    tools.length ? el('ul', {}, tools.map((t) => el('li', {}, el('code', {}, t.name), t.description ? ` — ${t.description}` : ''))) : el('p', { class: 'muted' }, 'none declared'),
    subAgents.length ? [el('h3', {}, 'Sub-agents'), el('ul', {}, subAgents.map((s) => el('li', {},
      el('code', {}, [...s.parent_path, s.name].join(' / ')), ` (${s.collaboration_mode})`, s.description ? ` — ${s.description}` : '')))] : '');
}

// ---- One trajectory --------------------------------------------------------

async function trajectoryView(id) {
  const detail = await api(`/v1/trajectories/${encodeURIComponent(id)}`);
  const s = detail.summary;
  const CALLS = ['shell_command', 'tool_call', 'web_fetch', 'file_operation'];
  const results = {};
  const calls = {};
  for (const e of detail.events) {
    const { call_id: callId, type } = e.event.payload;
    if (!callId) continue;
    if (CALLS.includes(type)) calls[callId] = e.seq;
    else if (type.endsWith('_output') || type === 'file_operation_result') results[callId] = e.seq;
  }
  const stepLink = (seq, text) => el('a', { href: `#step-${seq}`, onclick: jump(seq) }, text);
  const rows = detail.events.map((e) => {
    const payload = e.event.payload;
    const verdict = e.adjudication;
    const isCall = CALLS.includes(payload.type);
    let link = '';
    if (isCall && results[payload.call_id] !== undefined) link = stepLink(results[payload.call_id], `result: step ${results[payload.call_id]}`);
    else if (!isCall && calls[payload.call_id] !== undefined) link = stepLink(calls[payload.call_id], `answers step ${calls[payload.call_id]}`);
    return el('tr', { id: `step-${e.seq}`, class: verdict ? verdict.decision : '', tabindex: '-1' },
      el('td', { 'data-label': '#' }, String(e.seq)),
      el('td', { 'data-label': 'Time' }, time(e.event.timestamp)),
      el('td', { 'data-label': 'Actor' }, `${e.event.actor.kind}:${e.event.actor.id}`),
      el('td', { 'data-label': 'Kind' }, payload.type),
      el('td', { 'data-label': 'Step' }, el('pre', {}, describe(payload)), link),
      el('td', { 'data-label': 'Verdict' }, verdict ? [decisionLabel(verdict.decision), verdict.decision !== 'allow' ? el('div', { class: 'muted' }, verdict.reason || '') : ''] : ''),
      el('td', { 'data-label': 'Policies' }, verdict ? (verdict.policies || []).map((p) => p.policy_id).join(', ') : ''));
  });
  return el('section', { 'aria-labelledby': 'trajectory-title' },
    el('h2', { id: 'trajectory-title' }, `Trajectory ${s.id}`),
    el('div', { class: 'card kv' },
      el('span', {}, 'Agent'), el('span', {}, s.agent_id),
      el('span', {}, 'Status'), el('span', {}, s.status),
      el('span', {}, 'Session'), el('span', {}, s.session_id || '-'),
      el('span', {}, 'Steps judged'), el('span', {}, String(s.state.step_count || 0)),
      el('span', {}, 'Denied / escalated'), el('span', {}, `${s.state.denial_count || 0} / ${s.state.escalation_count || 0}`),
      el('span', {}, 'Taints'), el('span', {}, [s.state.secrets_seen ? 'secrets seen' : '', s.state.untrusted_seen ? 'untrusted content seen' : ''].filter(Boolean).join(', ') || 'none'),
      el('span', {}, 'Tools used'), el('span', {}, (s.state.tools_used || []).join(', ') || 'none')),
    el('table', { id: 'timeline' },
      el('thead', {}, el('tr', {}, ['#', 'Time', 'Actor', 'Kind', 'Step', 'Verdict', 'Policies'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, rows)));
}

function jump(seq) {
  return (event) => {
    event.preventDefault();
    const row = document.getElementById(`step-${seq}`);
    if (row) { row.scrollIntoView({ block: 'center' }); row.focus(); }
  };
}

// ---- Policies --------------------------------------------------------------

const WINDOWS = { '1h': 3600, '24h': 86400, '7d': 604800 };

async function policiesView() {
  const picked = sessionStorage.getItem('window') || '24h';
  const since = new Date(Date.now() - WINDOWS[picked] * 1000).toISOString();
  const [loaded, analytics] = await Promise.all([
    api('/v1/policies'),
    api(`/v1/analytics?since=${encodeURIComponent(since)}`),
  ]);
  const counts = Object.fromEntries(analytics.top_denying_policies.map((p) => [p.policy_id, p.count]));
  const shadowCounts = Object.fromEntries(analytics.shadow_matches.map((p) => [p.policy_id, p.count]));
  const picker = el('select', {
    'aria-label': 'Window',
    onchange: (e) => { sessionStorage.setItem('window', e.target.value); route(); },
  }, Object.keys(WINDOWS).map((w) => el('option', { value: w, selected: w === picked }, `last ${w}`)));
  const rows = loaded.policies.map((p) => el('tr', { 'data-policy': p.policy_id },
    el('td', { 'data-label': 'Policy' }, el('code', {}, p.policy_id)),
    el('td', { 'data-label': 'Description' }, p.description || ''),
    el('td', { 'data-label': 'Kind' }, [p.effect, p.escalate ? 'escalates' : '', p.shadow ? 'shadow (monitor)' : ''].filter(Boolean).join(', ')),
    el('td', { 'data-label': 'Annotations' }, Object.entries(p.annotations).filter(([k]) => !['id', 'description'].includes(k)).map(([k, v]) => `@${k}(${v})`).join(' ')),
    el('td', { 'data-label': 'Denied or escalated' }, String(counts[p.policy_id] || 0)),
    el('td', { 'data-label': 'Would have denied (shadow)' }, p.shadow ? String(shadowCounts[p.policy_id] || 0) : '')));
  const wouldDeny = loaded.policies.filter((p) => p.shadow && shadowCounts[p.policy_id]);
  return el('section', { 'aria-labelledby': 'policies-title' },
    el('h2', { id: 'policies-title' }, `Policies (${loaded.policies.length}, mode ${loaded.mode})`),
    el('div', { class: 'filters' }, el('label', {}, 'Window', picker)),
    el('table', {},
      el('thead', {}, el('tr', {}, ['Policy', 'Description', 'Kind', 'Annotations', 'Denied or escalated', 'Would have denied (shadow)'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, rows)),
    el('h3', {}, `What shadow-mode policies would have denied in the last ${picked}`),
    wouldDeny.length
      ? el('ul', { id: 'shadow' }, wouldDeny.map((p) => el('li', {}, el('code', {}, p.policy_id), ` would have denied ${shadowCounts[p.policy_id]} steps`, p.description ? ` — ${p.description}` : '')))
      : el('p', { class: 'muted' }, 'No shadow-mode policy matched a step in this window.'));
}

// ---- Charts ----------------------------------------------------------------

async function chartsView() {
  const picked = sessionStorage.getItem('window') || '24h';
  const span = WINDOWS[picked] * 1000;
  const buckets = 12;
  const now = Date.now();
  const edges = Array.from({ length: buckets + 1 }, (_, i) => new Date(now - span + (span / buckets) * i));
  const [counts, latency] = await Promise.all([
    Promise.all(edges.slice(0, -1).map((since, i) => api(
      `/v1/analytics?since=${encodeURIComponent(since.toISOString())}&until=${encodeURIComponent(edges[i + 1].toISOString())}`))),
    api('/v1/latency'),
  ]);
  return el('section', { 'aria-labelledby': 'charts-title' },
    el('h2', { id: 'charts-title' }, `Decisions over the last ${picked}`),
    el('div', { class: 'chart' }, decisionsChart(counts, edges)),
    el('h2', {}, 'Adjudication latency since the server started'),
    el('div', { class: 'chart', id: 'latency' }, latencyChart(latency)));
}

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  for (const child of children.flat()) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

// Stacked bars of decisions per bucket, with a y-axis of counts and each
// bucket's time range under it (the last edge is now).
function decisionsChart(counts, edges) {
  const width = 1100, height = 250, left = 48, bottom = 40, top = 24;
  const max = Math.max(1, ...counts.map((c) => c.allowed + c.denied + c.escalated));
  const slot = (width - left) / counts.length;
  const plot = height - bottom - top;
  const scale = (n) => (n / max) * plot;
  const clock = (d) => d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const ticks = [...new Set([0, Math.round(max / 2), max])];
  const axis = svg('g', { class: 'y-axis' },
    svg('line', { x1: left - 6, y1: top, x2: left - 6, y2: height - bottom, stroke: '#5b6573' }),
    ticks.map((t) => {
      const y = height - bottom - scale(t);
      return svg('g', {},
        svg('line', { x1: left - 10, y1: y, x2: width, y2: y, stroke: '#d6dbe2' }),
        svg('text', { x: left - 12, y: y + 4, 'text-anchor': 'end', 'font-size': 11 }, String(t)));
    }),
    svg('text', { x: left - 12, y: top - 10, 'text-anchor': 'end', 'font-size': 11 }, 'steps'));
  const bars = counts.map((c, i) => {
    let y = height - bottom;
    const parts = [['allowed', c.allowed, '#1f7a43'], ['escalated', c.escalated, '#a35a00'], ['denied', c.denied, '#b3261e']];
    const range = `${clock(edges[i])}–${clock(edges[i + 1])}`;
    return svg('g', {}, parts.map(([name, n, colour]) => {
      const h = scale(n);
      y -= h;
      return svg('rect', { x: left + i * slot + 4, y, width: slot - 8, height: h, fill: colour },
        svg('title', {}, `${range}: ${n} ${name}`));
    }), svg('text', { class: 'bucket', x: left + i * slot + slot / 2, y: height - 22, 'text-anchor': 'middle', 'font-size': 10 }, range));
  });
  const totals = counts.reduce((t, c) => ({ allowed: t.allowed + c.allowed, denied: t.denied + c.denied, escalated: t.escalated + c.escalated }), { allowed: 0, denied: 0, escalated: 0 });
  return [
    svg('svg', { viewBox: `0 0 ${width} ${height}`, width: '100%', role: 'img', 'aria-label': `Decisions: ${totals.allowed} allowed, ${totals.denied} denied, ${totals.escalated} escalated` },
      axis, bars),
    el('p', { class: 'legend' },
      el('span', { class: 'decision allow' }, `allowed ${totals.allowed}`),
      el('span', { class: 'decision deny' }, `denied ${totals.denied}`),
      el('span', { class: 'decision escalate' }, `escalated ${totals.escalated}`)),
  ];
}

function latencyChart(latency) {
  const entries = [['p50', latency.p50_seconds], ['p90', latency.p90_seconds], ['p99', latency.p99_seconds]];
  const label = (s) => (s === null || s === undefined ? 'over 5 s' : s < 0.001 ? `≤ ${(s * 1e6).toFixed(0)} µs` : `≤ ${(s * 1000).toFixed(1)} ms`);
  const max = Math.max(...entries.map(([, s]) => s || 5));
  return [
    el('p', {}, `${latency.count} adjudications`),
    svg('svg', { viewBox: '0 0 600 100', width: '600', role: 'img', 'aria-label': entries.map(([n, s]) => `${n} ${label(s)}`).join(', ') },
      entries.map(([name, s], i) => svg('g', {},
        svg('text', { x: 0, y: 22 + i * 30, 'font-size': 12 }, name),
        svg('rect', { x: 40, y: 10 + i * 30, height: 18, width: Math.max(2, ((s || 5) / max) * 400), fill: '#2457d6' }),
        svg('text', { x: 450, y: 22 + i * 30, 'font-size': 12 }, label(s))))),
  ];
}

// ---- Routing and sign-in ---------------------------------------------------

const VIEWS = { approvals: approvalsView, feed: feedView, agents: agentsView, policies: policiesView, charts: chartsView };

function currentView() {
  return (location.hash.replace(/^#\//, '').split('/')[0]) || 'approvals';
}

async function route() {
  const shown = location.hash;
  const [name, arg] = location.hash.replace(/^#\//, '').split('/');
  const key = name || 'approvals';
  for (const link of document.querySelectorAll('nav a')) {
    if (link.dataset.view === key) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  try {
    const node = key === 'trajectory' ? await trajectoryView(decodeURIComponent(arg || '')) : await (VIEWS[key] || approvalsView)();
    view.replaceChildren(node);
    if (key === 'feed') renderFeed();
  } catch (error) {
    if (error instanceof SignInNeeded) return signIn();
    view.replaceChildren(el('p', { class: 'error', role: 'alert' }, error.message));
    if (error instanceof Unreachable) setTimeout(() => { if (location.hash === shown) route(); }, 3000);
  }
}

function signIn() {
  if (state.stream) { state.stream.close(); state.stream = null; }
  document.getElementById('who').replaceChildren();
  view.replaceChildren(document.getElementById('sign-in').content.cloneNode(true));
  const form = document.getElementById('sign-in-form');
  document.getElementById('token').focus();
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const session = await api('/session', { method: 'POST', body: { token: document.getElementById('token').value } });
      localStorage.setItem(PAGE_KEY, session.page_key);
      await start();
    } catch (error) {
      document.getElementById('sign-in-error').textContent = error instanceof SignInNeeded ? 'That token is not accepted.' : error.message;
    }
  });
}

async function start() {
  let me;
  try {
    me = await api('/session');
  } catch (error) {
    if (error instanceof SignInNeeded) return signIn();
    throw error;
  }
  const out = el('button', {
    onclick: async () => {
      await api('/session', { method: 'DELETE' }).catch(() => {});
      localStorage.removeItem(PAGE_KEY);
      signIn();
    },
  }, 'Sign out');
  document.getElementById('who').replaceChildren(
    el('span', {}, `${me.name} · ${me.tenant}`), me.sign_in_needed ? out : '');
  follow();
  await route();
}

window.addEventListener('hashchange', route);
// A page going away closes its stream at once rather than leaving it open
// on the server until the connection times out.
window.addEventListener('pagehide', () => { if (state.stream) { state.stream.close(); state.stream = null; } });
window.addEventListener('pageshow', (event) => { if (event.persisted) follow(); });
start();
