// The Relabel page's decision queue and the live metric beside it (two st.components.v2 components, one script:
// empathy_app/keyqueue.py). Its state lives on `globalThis` (per browser tab), keyed by the Streamlit session, so
// a re-render of the component (each fragment run) keeps the queue of events not yet acknowledged. One keydown
// listener is installed once and never removed: a key pressed while the component re-renders is still taken.
// keyqueue.py inlines the import below (a component's script is one module, loaded from a blob: URL).
import {direction, keyEffect, liveTable} from './live_table.js';

const G = globalThis.__empathyRelabelQueue
  || (globalThis.__empathyRelabelQueue = {queues: {}, active: null, listening: false});
const pairKey = (item, model) => JSON.stringify([item, model]);
const ENTITIES = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'};
const escapeText = (s) => String(s).replace(/[&<>"']/g, (c) => ENTITIES[c]);

function current(q) {
  const gone = new Set(q.events.filter((e) => e.item !== undefined).map((e) => pairKey(e.item, e.model)));
  return (q.data.items || []).find((it) => !gone.has(pairKey(it.item, it.model))) || null;
}

// Keys are sent at most once per data.flush_ms (a throttle: a key after a quiet spell goes at once, keys that
// follow ride with the next send), an undo at once. Each send is a fragment run on the server, whose cost is
// mostly fixed: keys sent together share it (keyqueue.FLUSH_MS). Every event not yet acknowledged goes with
// each send, and the status line counts them until the server acknowledges them.
function send(q, atOnce) {
  const wait = atOnce ? 0 : (q.sentAt || 0) + (q.data.flush_ms || 0) - Date.now();
  if (wait > 0) {
    if (!q.flushTimer) q.flushTimer = setTimeout(() => { q.flushTimer = 0; flush(q); }, wait);
    return;
  }
  flush(q);
}

function flush(q) {
  clearTimeout(q.flushTimer);
  q.flushTimer = 0;
  const last = q.events.length ? q.events[q.events.length - 1].seq : 0;
  // the page left (the next mount sends them), or nothing new since the last send
  if (!q.root || !q.root.isConnected || last <= (q.sentSeq || 0)) return;
  q.sentAt = Date.now();
  q.sentSeq = last;
  q.sends = (q.sends || 0) + 1;  // counted for the tests and benchmarks (tests/test_browser_relabel.py)
  q.send('events', {client: q.client, events: q.events});
}

function act(q, a) {
  const d = q.data;
  if (a.action === 'undo') {
    if (q.undoSeq) { q.ignored += 1; render(q); return; }
    const e = {seq: ++q.seq, action: 'undo', annotator: d.annotator, t: Date.now()};
    q.events.push(e);
    q.undoSeq = e.seq;
    render(q); send(q, true); return;
  }
  const cur = current(q);
  if (!cur || q.undoSeq || (a.action !== 'skip' && (!d.enabled || !cur.decidable))) {
    q.ignored += 1; render(q); return;
  }
  const e = {seq: ++q.seq, item: cur.item, model: cur.model, hash: cur.hash, issued: cur.issued,
             dimension: d.dimension, apply_to: d.apply_to, annotator: d.annotator, t: Date.now()};
  if (a.action === 'skip') { e.action = 'skip'; } else { e.action = 'decide'; e.value = a.value; }
  // shown in audit order: the key is an audit decision (the server checks the mark against the design)
  if (cur.audit && e.action === 'decide') e.audit = cur.audit;
  const live = d.live;
  // the label the metric uses now and after this decision (the server computed both for each level)
  const fx = e.action === 'decide' ? keyEffect(live, cur, a.value) : null;
  if (fx) {
    const before = liveRows(q);
    e.fx = fx;
    q.last = {scope: live.scope, item: cur.item, model: cur.model,
              prev: new Map(before.rows.map((r) => [r.model, r]))};
  } else if (e.action === 'decide' && live) {
    q.last = {scope: live.scope, item: cur.item, model: cur.model, prev: null};  // not in the table shown
  }
  q.events.push(e);
  if (e.action === 'undo') q.last = null;
  render(q); send(q);
}

// The live metric (CA of Eq. 3: per model, the mean of its usable labels) from the server's sums and counts
// with every decision not yet acknowledged added, ranked as the server ranks (live_table.js).
function liveRows(q) {
  return liveTable(q.data && q.data.live, q.events);
}

// the table's heading: which value ranks first
const FIRST = {higher: 'highest', lower: 'lowest'};
const fixed4 = (v) => (v === null || v === undefined ? 'nan' : v.toFixed(4));
// a model without a value has no rank (the server's convention): shown as an empty cell, or a dash in a sentence
const rankCell = (rank) => (rank === null || rank === undefined ? '' : String(rank));
const rankWord = (rank) => rankCell(rank) || '–';

function renderLive(q) {
  const root = (G.live || {})[q.session];
  if (!root || !root.isConnected || !q.data) return;
  const live = q.data.live;
  if (!live) { root.innerHTML = ''; return; }
  const {rows, pending} = liveRows(q);
  const last = q.last && q.last.scope === live.scope ? q.last : null;
  const col = `${live.metric} (${live.judge})`;
  const body = rows.map((r) => {
    const p = last && last.prev ? last.prev.get(r.model) : null;
    const change = p && r.value !== null && p.value !== null ? r.value - p.value : null;
    const moved = p && p.rank !== r.rank;
    const marked = p && r.model === last.model ? ' ◀' : '';
    const delta = change === null ? '' : change === 0 ? '0' : (change > 0 ? '+' : '') + fixed4(change);
    return `<tr${moved ? ' class="rq-moved"' : ''}><td>${rankCell(r.rank)}</td>` +
      `<td>${escapeText(r.model)}${marked}</td><td>${fixed4(r.value)}</td><td>${delta}</td>` +
      `<td>${p ? rankCell(p.rank) : ''}</td><td>${r.n}</td></tr>`;
  }).join('');
  let lastLine = '';
  if (last && !last.prev) {
    lastLine = `Last decision ${escapeText(last.item)} / ${escapeText(last.model)}: leaves ${escapeText(col)} ` +
      `here unchanged (another task than the one shown, or not saved for ${escapeText(live.judge)}).`;
  } else if (last) {
    const now = rows.find((r) => r.model === last.model);
    const was = last.prev.get(last.model);
    if (now && was) {
      const moved = rows.filter((r) => last.prev.has(r.model) && last.prev.get(r.model).rank !== r.rank).length;
      lastLine = `Last decision ${escapeText(last.item)} / ${escapeText(last.model)}: ${escapeText(col)} of ` +
        `${escapeText(last.model)} ${fixed4(was.value)} → ${fixed4(now.value)}, rank ${rankWord(was.rank)} → ${rankWord(now.rank)}; ` +
        `${moved} model(s) changed rank.`;
    }
  }
  const status = pending ? `Includes ${pending} decision(s) not saved yet: computed in this browser from the ` +
    'labels the server sent; the server\'s recomputation replaces them once saved.'
    : 'Recomputed on the server with every saved decision.';
  root.innerHTML = `<div class="rq-live" data-testid="relabel-live" data-pending="${pending}" ` +
    `data-scope="${escapeText(live.scope)}"><div><b>Live ${escapeText(live.metric)} per model ` +
    `(${escapeText(live.judge)})</b>, with the human decisions, ${FIRST[direction(live)]} first; ◀ the last ` +
    'decision\'s model' +
    `</div><table><thead><tr><th>#</th><th>model</th><th>${escapeText(live.metric)}</th><th>change</th>` +
    `<th title="rank before the last decision">was</th><th title="outputs with a label">n</th></tr></thead>` +
    `<tbody>${body}</tbody></table>` +
    `<div class="rq-last" data-testid="relabel-live-last">${lastLine}</div>` +
    `<div class="rq-note">${status}</div></div>`;
}

function onKey(ev) {
  const q = G.active;
  if (!q || !q.root || !q.root.isConnected) return;
  if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.isComposing) return;
  const t = ev.target;
  // keys typed into a text box, a select or an editable element are never decisions
  if (t && t.closest && t.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]')) return;
  const k = ev.key && ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
  const d = q.data;
  let a = null;
  if (d.keys && Object.prototype.hasOwnProperty.call(d.keys, k)) a = {value: d.keys[k]};
  else if (k === 's' && d.navigation) a = {action: 'skip'};
  else if (k === 'u' && d.navigation) a = {action: 'undo'};
  if (!a) return;
  ev.preventDefault();
  ev.stopImmediatePropagation();
  if (ev.repeat) return;  // a held key decides once
  act(q, a);
}

function render(q) {
  const d = q.data;
  const cur = current(q);
  const waiting = q.events.length;
  const status = q.root.querySelector('.rq-status');
  const body = q.root.querySelector('.rq-body');
  let text = waiting ? `Saving ${waiting} key(s)…` : 'Every key saved.';
  if (q.undoSeq) {
    text += ' <span class="rq-paused">Undo on its way: keys are paused (not recorded) until it is done.</span>';
  } else if (!cur && d.remaining > 0) {
    text += ' <span class="rq-paused">Waiting for the next outputs from the server: keys are paused (not '
      + 'recorded) until one is shown.</span>';
  }
  if (q.ignored) text += ` · ${q.ignored} key(s) not taken (paused or nothing to decide).`;
  status.innerHTML = text;
  status.setAttribute('data-pending', String(waiting));
  renderLive(q);
  if (!cur) {
    body.innerHTML = d.remaining > 0 ? '' : `<div class="rq-note">${escapeText(d.done_text || '')}</div>`;
    return;
  }
  const buttons = (d.buttons || []).map((b, i) =>
    `<button type="button" class="rq-decide" data-index="${i}" title="${escapeText(b.help || '')}"` +
    `${d.enabled && cur.decidable ? '' : ' disabled'}>${escapeText(b.label)}</button>`).join('');
  const navigation = d.navigation ? '<button type="button" data-action="skip">Skip (S)</button>' +
    '<button type="button" data-action="undo">Undo (U)</button>' : '';
  const reference = (d.refs || {})[cur.ref] || '';
  const texts = cur.notext ? `<div class="rq-note">${cur.notext}</div>` :
    `${(d.legends || {})[cur.legend] || ''}<div class="rq-texts"><div><b>Reference / prompt</b><div class="rq-box">${reference}</div></div>` +
    `<div><b>Generation</b><div class="rq-box">${cur.gen}</div></div></div>${cur.sum || ''}${cur.conv || ''}`;
  body.innerHTML = `<div class="rq-item" data-testid="relabel-item"><div class="rq-head">${cur.head}</div>${texts}` +
    `<div class="rq-buttons">${buttons}${navigation}</div><div class="rq-note">${cur.note}</div></div>`;
  // the marks' styles and titles come once per window, in tables (keyqueue._hoisted): put back on the elements,
  // the title as a property (text, never parsed as HTML)
  const styles = d.styles || {};
  const titles = d.titles || {};
  for (const el of body.querySelectorAll('[data-rs]')) el.style.cssText = styles[el.dataset.rs] || '';
  for (const el of body.querySelectorAll('[data-rt]')) el.title = titles[el.dataset.rt] || '';
  const item = body.querySelector('.rq-item');
  item.setAttribute('data-item', cur.item);
  item.setAttribute('data-model', cur.model);
}

export default function (component) {
  const {data, setStateValue, setTriggerValue, parentElement} = component;
  if (data.mode === 'live') {
    G.live = G.live || {};
    G.live[data.session] = parentElement.querySelector('.rq-live-root') || parentElement;
    if (G.queues[data.session]) renderLive(G.queues[data.session]);
    return () => {};
  }
  let q = G.queues[data.session];
  if (!q) {
    q = {client: `${data.session}:${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`,
         seq: 0, events: [], ignored: 0, undoSeq: 0};
    G.queues[data.session] = q;
  }
  const acked = (data.acked || {})[q.client] || 0;
  q.events = q.events.filter((e) => e.seq > acked);
  if (q.undoSeq && q.undoSeq <= acked) q.undoSeq = 0;
  q.data = data;
  q.session = data.session;
  q.root = parentElement.querySelector('.rq-root') || parentElement;
  q.send = setStateValue;
  q.trigger = setTriggerValue;
  G.active = q;
  if (!G.listening) {
    window.addEventListener('keydown', onKey, true);
    // a tab hidden or closed sends what it holds at once (the throttle would wait)
    const leaving = () => { if (G.active) flush(G.active); };
    document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'hidden') leaving(); });
    window.addEventListener('pagehide', leaving);
    G.listening = true;
  }
  q.root.onclick = (ev) => {
    const button = ev.target.closest && ev.target.closest('button');
    if (!button || button.disabled || !q.root.contains(button)) return;
    if (button.dataset.action) act(q, {action: button.dataset.action});
    else if (button.dataset.index !== undefined) act(q, {value: d_value(q, button.dataset.index)});
  };
  render(q);
  // keys held back by the throttle while the page was away are sent now
  if (!q.flushTimer) flush(q);
  schedulePoll(q);
  return () => {};
}

// While the server is still parsing texts (data.poll_ms > 0), ask it again every poll_ms, for the marks the parse
// has reached meanwhile; not while a key is on its way (its own update comes). A timer here, not the fragment's
// run_every: the update that sends poll_ms 0 stops it, with no whole-page rerun. It re-arms itself: an update that
// changes nothing in the data (the parse has not reached the window yet) does not call this module again.
function schedulePoll(q) {
  clearTimeout(q.pollTimer);
  q.pollTimer = 0;
  const ms = q.data.poll_ms;
  if (!ms || !q.trigger) return;
  q.pollTimer = setTimeout(() => {
    q.pollTimer = 0;
    if (!q.root || !q.root.isConnected) return;  // the page left: the next mount polls again if it must
    if (!q.events.length) q.trigger('poll', Date.now());
    schedulePoll(q);
  }, ms);
}

function d_value(q, index) {
  return q.data.buttons[Number(index)].value;
}
