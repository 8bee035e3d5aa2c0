// The operator's dashboard: reads the /v1 API with the sign-in cookie and
// follows the live stream. Every value from the server is put in the page
// as text, never as markup.
'use strict';

const view = document.getElementById('view');
const FEED_LIMIT = 500;
const state = { feed: [], seen: new Set(), lastId: '', filters: { agent: '', decision: '', policy: '' }, stream: null };

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
// Which judgement a verdict is and which policy set made it, for tracing an
// agent's log line here; the revision is shortened as git shortens commits.
function judgement(verdict) {
  if (!verdict.decision_id && !verdict.policy_revision) return '';
  const parts = [];
  if (verdict.decision_id) parts.push(el('span', { class: 'decision-id' }, `decision ${verdict.decision_id}`));
  if (verdict.policy_revision) {
    parts.push(' ', el('span', { class: 'policy-revision', title: verdict.policy_revision }, `policies ${verdict.policy_revision.slice(0, 12)}`));
  }
  return el('div', { class: 'muted judgement' }, ...parts);
}

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

const APPROVALS_PAGE = 50;

async function approvalsView(chosen) {
  const page = await api(`/v1/approvals?status=pending&page_size=${APPROVALS_PAGE}`);
  const cards = el('div', { id: 'approval-cards' }, page.items.map(approvalCard));
  if (chosen) await markChosen(cards, chosen);
  const more = el('button', { id: 'more-approvals', hidden: !page.next }, `Show ${APPROVALS_PAGE} more`);
  let next = page.next;
  more.addEventListener('click', async () => {
    try {
      const following = await api(`/v1/approvals?status=pending&page_size=${APPROVALS_PAGE}&page_token=${encodeURIComponent(next)}`);
      for (const approval of following.items) {
        if (!cards.querySelector(`article[data-approval="${CSS.escape(approval.id)}"]`)) cards.append(approvalCard(approval));
      }
      next = following.next;
      more.hidden = !next;
    } catch (error) {
      say(error.message);
    }
  });
  refreshPending();
  return el('section', { 'aria-labelledby': 'approvals-title' },
    el('h2', { id: 'approvals-title' }, 'Pending approvals'),
    cards, more,
    el('p', { class: 'muted', id: 'nothing-waiting', hidden: page.items.length > 0 }, 'Nothing is waiting for a decision.'));
}

// A notification links to one approval (`#/approvals/ID`): its card comes
// first and is marked; one already settled is said to be.
async function markChosen(cards, id) {
  let card = cards.querySelector(`article[data-approval="${CSS.escape(id)}"]`);
  if (!card) {
    let approval;
    try {
      approval = await api(`/v1/approvals/${encodeURIComponent(id)}`);
    } catch (error) {
      if (error instanceof SignInNeeded) throw error;
      return say(`Approval ${id} was not found.`);
    }
    if (approval.status !== 'pending') return say(`Approval ${id} is already ${approval.status}.`);
    card = approvalCard(approval);
  }
  cards.prepend(card);
  card.classList.add('chosen');
  card.setAttribute('aria-current', 'true');
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
  document.getElementById('nothing-waiting').hidden = count > 0 || !document.getElementById('more-approvals').hidden;
  refreshPending();
}

// The badge counts every pending approval on the server, not the cards shown.
let pendingTimer = null;
function refreshPending() {
  if (pendingTimer) return;
  pendingTimer = setTimeout(() => {
    pendingTimer = null;
    api('/v1/approvals/pending-count').then((c) => setPending(c.pending)).catch(() => {});
  }, 150);
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
  return el('article', { class: 'card escalate', 'data-approval': approval.id },
    el('h3', {}, `${approval.agent_id} wants to run`),
    el('div', { class: 'action' }, actionDetail(approval.action),
      approval.action.type === 'shell_command' ? shellAnalysis(approval) : ''),
    el('p', { class: 'muted' }, clock(approval)),
    agentWaiting(approval),
    el('p', {}, approval.verdict.reason || ''),
    judgement(approval.verdict),
    policyList(approval.verdict.policies),
    el('p', { class: 'muted' },
      `Session ${approval.session_id || '-'} · `,
      el('a', { href: `#/trajectory/${encodeURIComponent(approval.trajectory_id)}` }, `trajectory step ${approval.seq}`),
      ` · expires ${time(approval.expires_at)}`),
    trajectorySoFar(approval),
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

// The steps before this one, fetched when the person opens them (a page of
// cards does not fetch every trajectory up front).
function trajectorySoFar(approval) {
  const list = el('div', {}, el('p', { class: 'muted' }, 'Loading the trajectory…'));
  const details = el('details', { class: 'history' }, el('summary', {}, `The trajectory so far (${approval.seq + 1} steps)`), list);
  details.addEventListener('toggle', async () => {
    if (!details.open || details.dataset.loaded) return;
    details.dataset.loaded = '1';
    try {
      const detail = await api(`/v1/trajectories/${encodeURIComponent(approval.trajectory_id)}`);
      const recent = detail.events.filter((e) => e.seq <= approval.seq).slice(-6);
      list.replaceChildren(el('ol', { start: recent.length ? recent[0].seq : 0 }, recent.map((e) => el('li', {},
        e.adjudication ? decisionLabel(e.adjudication.decision) : '', ' ', describe(e.event.payload)))));
    } catch (error) {
      delete details.dataset.loaded;
      list.replaceChildren(el('p', { class: 'error' }, error.message));
    }
  });
  return details;
}

// Whether the agent is still there to hear the answer, asked again every
// few seconds while the card is shown.
function agentWaiting(approval) {
  const node = el('p', { class: 'waiting muted' });
  const check = async () => {
    if (node.dataset.started && !node.isConnected) return;
    node.dataset.started = '1';
    try {
      const w = await api(`/v1/approvals/${encodeURIComponent(approval.id)}/waiting`);
      if (w.waiting) node.textContent = 'The agent is waiting for this answer.';
      else if (w.last_asked_seconds_ago !== undefined) node.textContent = `The agent stopped waiting ${span(w.last_asked_seconds_ago)} ago: it will not see a decision unless it asks again.`;
      else node.textContent = 'The agent is not waiting on this server (it may be waiting on another, or asked without waiting).';
    } catch (error) {
      if (error instanceof Unreachable) node.textContent = error.message;
    }
    setTimeout(check, 5000);
  };
  check();
  return node;
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
    el('p', { class: 'muted', id: 'feed-note' }, `The last ${FEED_LIMIT} steps at most, newest first. `,
      el('a', { href: '#/trajectories' }, 'Search every recorded trajectory')),
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

function feedRow(item) {
  return el('tr', { class: item.decision, 'data-live': item.id },
    el('td', { 'data-label': 'Time' }, time(item.at)),
    el('td', { 'data-label': 'Agent' }, item.agent),
    el('td', { 'data-label': 'Trajectory' }, el('a', { href: `#/trajectory/${encodeURIComponent(item.trajectory)}` }, `${item.trajectory.slice(0, 8)}#${item.seq}`)),
    el('td', { 'data-label': 'Step' }, item.step),
    el('td', { 'data-label': 'Decision' }, decisionLabel(item.decision), item.reason ? el('div', { class: 'muted' }, item.reason) : ''),
    el('td', { 'data-label': 'Policies' }, item.policies.join(', ')));
}

// The whole table again: when the view opens or a filter changes.
function renderFeed() {
  const body = document.querySelector('#feed tbody');
  if (!body) return;
  body.replaceChildren(...state.feed.filter(shown).map(feedRow));
}

// New steps arrive in bursts (thousands a second at times): they are queued
// and put in the table at most a few times a second, newest on top, with
// the oldest rows taken away past the limit.
let pendingRows = [];
let flushTimer = null;
function addToFeed(items) {
  for (const item of items) {
    if (state.seen.has(item.id)) continue;
    state.seen.add(item.id);
    pendingRows.push(item);
  }
  if (!flushTimer) flushTimer = setTimeout(flushFeed, 200);
}

function flushFeed() {
  flushTimer = null;
  const fresh = pendingRows.sort((a, b) => liveOrder(b.id) - liveOrder(a.id));
  pendingRows = [];
  state.feed = fresh.concat(state.feed).sort((a, b) => liveOrder(b.id) - liveOrder(a.id));
  for (const dropped of state.feed.splice(FEED_LIMIT)) state.seen.delete(dropped.id);
  const body = document.querySelector('#feed tbody');
  if (!body) return;
  const rows = fresh.filter(shown).map(feedRow);
  body.prepend(...rows);
  while (body.rows.length > FEED_LIMIT) body.lastElementChild.remove();
}

// A place in the stream is EPOCH-N; within one run of the server, N orders.
function liveOrder(id) {
  return Number(String(id).split('-')[1] || 0);
}

function feedItem(id, data) {
  const verdict = data.adjudication || {};
  return {
    id,
    at: data.event.timestamp,
    agent: data.event.agent.id,
    trajectory: data.event.trajectory_id,
    seq: data.seq,
    step: describe(data.event.payload),
    decision: verdict.decision || 'allow',
    reason: verdict.decision && verdict.decision !== 'allow' ? verdict.reason : '',
    policies: (verdict.policies || []).map((p) => p.policy_id),
  };
}

// One live item, however it came (this tab's stream or another tab's).
function received(kind, id, data) {
  if (id) state.lastId = id;
  if (kind === 'event') addToFeed([feedItem(id, data)]);
  else if (kind === 'approval') approvalChanged(data);
  else if (kind === 'gap') {
    say('Some steps happened while this page was away and are no longer kept here: reloading the feed.');
    loadHistory();
  }
}

function approvalChanged(approval) {
  if (approval.status === 'pending') say(`${approval.agent_id} is waiting for a decision`);
  if (currentView() === 'approvals') updateCard(approval);
  refreshPending();
}

// What the server's live history kept: the feed is not empty when it opens.
async function loadHistory() {
  const recent = await api(`/v1/events/recent?recent=${FEED_LIMIT}`);
  state.feed = [];
  state.seen = new Set();
  pendingRows = [];
  addToFeed(recent.items.filter((i) => i.kind === 'event').map((i) => feedItem(i.id, i.data)));
  flushFeed();
  renderFeed();
  if (!state.lastId) state.lastId = recent.cursor;
}

// One stream for every tab of this page: the tab holding the lock follows
// the server and passes each item to the others over a BroadcastChannel.
// When it goes away the lock passes to another tab, which resumes after the
// last item it saw. Without Web Locks (a page not served over TLS or
// loopback), each tab follows on its own.
const channel = 'BroadcastChannel' in window ? new BroadcastChannel('sondera-live') : null;
if (channel) channel.onmessage = (message) => received(message.data.kind, message.data.id, message.data.data);
let releaseLead = null;

function follow() {
  if (state.stream || releaseLead) return;
  if (!navigator.locks || !channel) { openStream(); return; }
  navigator.locks.request('sondera-live', () => new Promise((release) => {
    releaseLead = release;
    openStream();
  })).catch(() => {});
}

function stopFollowing() {
  if (state.stream) { state.stream.close(); state.stream = null; }
  if (releaseLead) { releaseLead(); releaseLead = null; }
}

function openStream() {
  const after = state.lastId ? `&after=${encodeURIComponent(state.lastId)}` : '';
  const stream = new EventSource(`/v1/events/stream?page_key=${encodeURIComponent(pageKey())}${after}`);
  state.stream = stream;
  for (const kind of ['event', 'approval', 'gap']) {
    stream.addEventListener(kind, (message) => {
      const data = kind === 'gap' ? message.data : JSON.parse(message.data);
      received(kind, message.lastEventId, data);
      if (channel) channel.postMessage({ kind, id: message.lastEventId, data });
    });
  }
  stream.addEventListener('error', () => {
    // The browser reconnects by itself, sending the last id it saw. A
    // stream the server closed for good (signed out here or in another
    // tab, the session expired, the token removed) asks to sign in again;
    // any other is opened again after the last item seen.
    if (stream.readyState === EventSource.CLOSED) {
      state.stream = null;
      api('/session').then(() => setTimeout(openStream, 1000)).catch((error) => {
        if (error instanceof SignInNeeded) signIn();
        else setTimeout(openStream, 1000);
      });
    }
  });
}

// ---- Agents ----------------------------------------------------------------

// Counts come from the server, over every trajectory of each agent.
async function agentsView() {
  const agents = await api('/v1/agents?page_size=1000');
  return el('section', { 'aria-labelledby': 'agents-title' },
    el('h2', { id: 'agents-title' }, 'Agents'),
    agents.next ? el('p', { class: 'muted' }, 'The first 1000 agents are shown.') : '',
    el('div', { class: 'grid' }, agents.items.map(agentCard)));
}

function trajectoriesLink(query, text) {
  return el('a', { href: `#/trajectories?${new URLSearchParams(query)}` }, text);
}

function agentCard(record) {
  const agent = record.agent;
  const card = agent.card || {};
  const tools = card.tools || [];
  const subAgents = card.sub_agents || [];
  const allowed = Math.max(0, record.step_count - record.denial_count - record.escalation_count);
  return el('article', { class: 'card', 'data-agent': agent.id },
    el('h3', {}, agent.id, el('span', { class: 'muted' }, ` · ${agent.provider}`)),
    el('div', { class: 'kv' },
      el('span', {}, 'Trajectories'), el('span', {}, trajectoriesLink({ agent: agent.id }, String(record.trajectory_count))),
      el('span', {}, 'Steps judged'), el('span', {}, String(record.step_count)),
      el('span', {}, 'Decisions'), el('span', {},
        decisionLabel('allow'), ` ${allowed} `,
        decisionLabel('deny'), ' ', trajectoriesLink({ agent: agent.id, decision: 'deny' }, String(record.denial_count)), ' ',
        decisionLabel('escalate'), ' ', trajectoriesLink({ agent: agent.id, decision: 'escalate' }, String(record.escalation_count))),
      el('span', {}, 'Last seen'), el('span', {}, time(record.last_seen))),
    el('h3', {}, 'Tools'),
    tools.length ? el('ul', {}, tools.map((t) => el('li', {}, el('code', {}, t.name), t.description ? ` — ${t.description}` : ''))) : el('p', { class: 'muted' }, 'none declared'),
    subAgents.length ? [el('h3', {}, 'Sub-agents'), el('ul', {}, subAgents.map((s) => el('li', {},
      el('code', {}, [...s.parent_path, s.name].join(' / ')), ` (${s.collaboration_mode})`, s.description ? ` — ${s.description}` : '')))] : '',
    standingGrants(agent.id));
}

// What a grant covers, in words.
function shapeText(shape) {
  switch (shape.kind) {
    case 'shell': return `shell: ${shape.commands.map((c) => `${c.privileged ? 'sudo ' : ''}${c.program}${c.subcommand ? ` ${c.subcommand}` : ''}`).join(', ')}`;
    case 'file': return `file ${shape.operation}: ${shape.path}`;
    case 'web': return `web: ${shape.host}`;
    case 'tool': return `tool ${shape.tool}: ${shape.target}`;
    default: return JSON.stringify(shape);
  }
}

// The agent's standing ("always") approvals: who granted what and when,
// each with a way to take it back.
function standingGrants(agentId) {
  const node = el('div', { class: 'grants' }, el('h3', {}, 'Standing approvals'));
  const path = `/v1/agents/${encodeURIComponent(agentId)}/grants`;
  const show = async () => {
    const { grants } = await api(path);
    const list = grants.length ? el('ul', {}, grants.map((g) => el('li', { 'data-grant': g.id },
      el('code', {}, shapeText(g.shape)),
      el('span', { class: 'muted' }, ` granted by ${g.granted_by.id} on ${time(g.granted_at)} `),
      el('button', {
        class: 'deny',
        onclick: async () => {
          if (!window.confirm(`Revoke "${shapeText(g.shape)}" for ${agentId}? Its later steps of this kind will be asked about again.`)) return;
          try {
            await api(`${path}/${encodeURIComponent(g.id)}`, { method: 'DELETE' });
            say('Standing approval revoked');
            show();
          } catch (error) {
            say(error.message);
          }
        },
      }, 'Revoke'))))
      : el('p', { class: 'muted' }, 'None: every escalated step is asked about.');
    node.replaceChildren(node.firstChild, list);
  };
  show().catch((error) => node.append(el('p', { class: 'error' }, error.message)));
  return node;
}

// ---- Trajectories ----------------------------------------------------------

const TRAJECTORY_FILTERS = [['agent', 'Agent'], ['decision', 'Decision'], ['policy', 'Policy'], ['since', 'Active from'], ['until', 'Active before'], ['text', 'Text']];
const TRAJECTORIES_PAGE = 50;
// Stands for the first page in the list of pages before this one.
const FIRST = 'first';

// Every recorded trajectory, newest first, a page at a time, filtered on the
// server. The filters live in the address, so every count elsewhere links
// to the trajectories behind it.
async function trajectoriesView(query) {
  const params = new URLSearchParams(query || '');
  const api_params = new URLSearchParams({ page_size: TRAJECTORIES_PAGE });
  const names = { agent: 'agent_id', policy: 'policy_id', decision: 'decision', since: 'since', until: 'until', text: 'text', page: 'page_token' };
  for (const [key, value] of params) if (names[key] && value) api_params.set(names[key], value);
  const page = await api(`/v1/trajectories?${api_params}`);
  const field = ([name, label]) => {
    const value = params.get(name) || '';
    if (name === 'decision') {
      return el('label', {}, label, el('select', { name }, ['', 'deny', 'escalate', 'allow'].map((d) => el('option', { value: d, selected: value === d },
        { '': 'any', deny: 'has a denial', escalate: 'has an escalation', allow: 'all allowed' }[d]))));
    }
    const type = name === 'since' || name === 'until' ? 'datetime-local' : 'text';
    const shown = type === 'datetime-local' && value ? localInput(value) : value;
    return el('label', {}, label, el('input', { type, name, value: shown }));
  };
  const form = el('form', { class: 'filters', id: 'trajectory-filters' }, TRAJECTORY_FILTERS.map(field), el('button', { type: 'submit' }, 'Search'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = new URLSearchParams();
    for (const [name, value] of new FormData(form)) {
      if (!value) continue;
      chosen.set(name, name === 'since' || name === 'until' ? new Date(value).toISOString() : value);
    }
    location.hash = `#/trajectories?${chosen}`;
  });
  const rows = page.items.map((t) => el('tr', { class: t.state.denial_count ? 'deny' : t.state.escalation_count ? 'escalate' : '', 'data-trajectory': t.id },
    el('td', { 'data-label': 'Trajectory' }, el('a', { href: `#/trajectory/${encodeURIComponent(t.id)}` }, t.id)),
    el('td', { 'data-label': 'Agent' }, t.agent_id),
    el('td', { 'data-label': 'Status' }, t.status),
    el('td', { 'data-label': 'Created' }, time(t.created_at)),
    el('td', { 'data-label': 'Steps' }, String(t.state.step_count || 0)),
    el('td', { 'data-label': 'Denied / escalated' }, `${t.state.denial_count || 0} / ${t.state.escalation_count || 0}`)));
  const pages = params.get('pages') ? params.get('pages').split(',') : [];
  const link = (changes, text) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) { if (v) next.set(k, v); else next.delete(k); }
    return el('a', { href: `#/trajectories?${next}` }, text);
  };
  const paging = el('p', { class: 'paging' },
    pages.length ? link({ page: pages[pages.length - 1] === FIRST ? '' : pages[pages.length - 1], pages: pages.slice(0, -1).join(',') }, '← Newer') : '',
    pages.length && page.next ? ' · ' : '',
    page.next ? link({ page: page.next, pages: [...pages, params.get('page') || FIRST].join(',') }, 'Older →') : '');
  return el('section', { 'aria-labelledby': 'trajectories-title' },
    el('h2', { id: 'trajectories-title' }, 'Trajectories'),
    form,
    page.items.length ? el('table', { id: 'trajectories' },
      el('thead', {}, el('tr', {}, ['Trajectory', 'Agent', 'Status', 'Created', 'Steps', 'Denied / escalated'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, rows)) : el('p', { class: 'muted', id: 'no-trajectories' }, 'No recorded trajectory matches.'),
    paging);
}

// An ISO time as a datetime-local input shows it (local time, minutes).
function localInput(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
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
  const row = (e) => {
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
      el('td', { 'data-label': 'Verdict' }, verdict ? [decisionLabel(verdict.decision), verdict.decision !== 'allow' ? el('div', { class: 'muted' }, verdict.reason || '') : '', judgement(verdict)] : ''),
      el('td', { 'data-label': 'Policies' }, verdict ? (verdict.policies || []).map((p) => p.policy_id).join(', ') : ''));
  };
  // A long trajectory is put in the page a few hundred rows at a time.
  const body = el('tbody', {});
  const more = el('button', { id: 'more-steps' });
  let rendered = 0;
  const renderUpTo = (count) => {
    const upTo = Math.min(count, detail.events.length);
    body.append(...detail.events.slice(rendered, upTo).map(row));
    rendered = upTo;
    const left = detail.events.length - rendered;
    more.hidden = left === 0;
    more.textContent = `Show ${Math.min(left, STEPS_PAGE)} more of ${left} steps left`;
  };
  more.addEventListener('click', () => renderUpTo(rendered + STEPS_PAGE));
  renderUpTo(STEPS_PAGE);
  state.showStep = (seq) => {
    const index = detail.events.findIndex((e) => e.seq === seq);
    if (index >= rendered) renderUpTo(index + 1);
  };
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
      body),
    more);
}

const STEPS_PAGE = 250;

function jump(seq) {
  return (event) => {
    event.preventDefault();
    if (state.showStep) state.showStep(seq);
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
    el('td', { 'data-label': 'Denied or escalated' }, policyCount(p.policy_id, counts[p.policy_id], since)),
    el('td', { 'data-label': 'Would have denied (shadow)' }, p.shadow ? policyCount(p.policy_id, shadowCounts[p.policy_id], since) : '')));
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

// A policy's count in the window, linked to the trajectories behind it.
function policyCount(policyId, count, since) {
  if (!count) return '0';
  return trajectoriesLink({ policy: policyId, since }, String(count));
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
      const query = { since: edges[i].toISOString(), until: edges[i + 1].toISOString() };
      if (name !== 'allowed') query.decision = name === 'denied' ? 'deny' : 'escalate';
      return svg('a', { href: `#/trajectories?${new URLSearchParams(query)}`, 'data-bucket': i, 'data-decision': name },
        svg('rect', { x: left + i * slot + 4, y, width: slot - 8, height: h, fill: colour },
          svg('title', {}, `${range}: ${n} ${name} (open the trajectories)`)));
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

// `#/name/arg?query`
function place() {
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?');
  const [name, arg] = path.split('/');
  return { name: name || 'approvals', arg: decodeURIComponent(arg || ''), query: query || '' };
}

function currentView() {
  return place().name;
}

async function route() {
  const shown = location.hash;
  const { name: key, arg, query } = place();
  for (const link of document.querySelectorAll('nav a')) {
    if (link.dataset.view === key) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  try {
    const node = key === 'trajectory' ? await trajectoryView(arg)
      : key === 'trajectories' ? await trajectoriesView(query)
        : await (VIEWS[key] || approvalsView)(arg);
    view.replaceChildren(node);
    if (key === 'feed') renderFeed();
  } catch (error) {
    if (error instanceof SignInNeeded) return signIn();
    view.replaceChildren(el('p', { class: 'error', role: 'alert' }, error.message));
    if (error instanceof Unreachable) setTimeout(() => { if (location.hash === shown) route(); }, 3000);
  }
}

function signIn() {
  stopFollowing();
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
  await loadHistory().catch(() => {});
  follow();
  refreshPending();
  await route();
}

window.addEventListener('hashchange', route);
// A page going away closes its stream at once rather than leaving it open
// on the server until the connection times out.
window.addEventListener('pagehide', stopFollowing);
window.addEventListener('pageshow', (event) => { if (event.persisted) follow(); });
start();
