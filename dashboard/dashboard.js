// The dashboard's script: no framework and no build step. Every second it reads GET /dashboard/data
// and fills the page; rates are the service's, over the last minute of its samples. With ApiKeys
// set, the key is asked for once and kept in this browser tab (sessionStorage), sent as X-API-Key.
// The page's other parts (board.js, charts.js) add their renderers to window.dashboardRenderers:
// each is given every reading of the feed.
'use strict';

const REFRESH_MS = Number(new URLSearchParams(location.search).get('refresh')) || 1000;
const KEY_STORE = 'sorter-integration-api-key';
const $ = (id) => document.getElementById(id);

let timer = null;
window.dashboardRenderers = window.dashboardRenderers || [];

function headers() {
  const key = sessionStorage.getItem(KEY_STORE);
  return key ? { 'X-API-Key': key } : {};
}

/** GET a JSON resource; null after a 401 (the key form is shown). */
async function getJson(path) {
  const res = await fetch(path, { headers: headers(), cache: 'no-store' });
  if (res.status === 401) {
    askForKey(sessionStorage.getItem(KEY_STORE) ? 'that key was refused' : '');
    return null;
  }
  // A known key of another role (a WCS's, a monitor's): the page needs an operator key.
  if (res.status === 403) {
    askForKey('that key may not read the dashboard: give an operator key');
    return null;
  }
  const body = await res.json().catch(() => null);
  return { status: res.status, body };
}

function askForKey(why) {
  $('key-form').hidden = false;
  $('key-error').textContent = why;
  $('key').focus();
  stop();
}

function text(id, value) {
  const el = $(id);
  const s = value === null || value === undefined ? '–' : String(value);
  if (el.textContent !== s) el.textContent = s;
}

const fmt = (n) => (n === null || n === undefined ? '–' : Number(n).toLocaleString('en'));
const rate = (n) => (n === null ? '–' : n >= 10 ? n.toFixed(0) : n.toFixed(1));

function duration(seconds) {
  if (seconds === null || seconds === undefined) return '–';
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.floor(seconds % 60)} s`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86400)} d ${Math.floor((seconds % 86400) / 3600)} h`;
}

const time = (iso) =>
  iso ? new Date(iso).toLocaleTimeString('en-GB', { hour12: false }) + '.' + String(new Date(iso).getMilliseconds()).padStart(3, '0') : '–';

/** Replace a table body's rows; cells are text, never HTML. */
function rows(tbodyId, data, cells) {
  const body = $(tbodyId);
  body.replaceChildren(
    ...data.map((item) => {
      const tr = document.createElement('tr');
      for (const cell of cells(item)) {
        const td = document.createElement('td');
        td.textContent = cell === null || cell === undefined ? '' : String(cell);
        tr.append(td);
      }
      return tr;
    }),
  );
}

function badge(el, value, good, warn) {
  el.textContent = value;
  el.className = `badge ${value === good ? 'good' : value === warn ? 'warn' : 'bad'}`;
}

function render(d) {
  const s = d.Status;
  badge($('state'), s.State, 'Running', 'Stopping');
  text('mode', s.TestMode ? 'test mode (replayed traffic)' : 'live');
  text('version', s.Version);
  text('uptime', duration(s.UptimeSeconds));
  text('updated', time(d.At));
  $('problems').replaceChildren(
    ...s.Problems.map((p) => {
      const li = document.createElement('li');
      li.textContent = p;
      return li;
    }),
  );

  text('sortation-depth', fmt(s['Sortation Q']));
  text('destination-depth', fmt(s['Destination Q']));
  text('sortation-clients', s.WaitingClients['Sortation Q']);
  text('destination-clients', s.WaitingClients['Destination Q']);
  text('oldest-age', s.OldestMessageAgeSeconds === null ? 'none' : duration(s.OldestMessageAgeSeconds));
  text('outbox-depth', fmt(s.Outbox.Depth));
  text('decisions-awaiting', fmt(s.DecisionLatency.Awaiting));
  text('decisions-late', fmt(s.DecisionLatency.Late));
  // A dead letter waits for an operator (GET /dead-letters, POST /dead-letters/requeue): shown as a problem while there are any.
  const dead = s.DeadLetters['Sortation Q'] + s.DeadLetters['Destination Q'];
  badge($('dead-letters'), fmt(dead), '0', '');
  text(
    'dead-detail',
    `${fmt(s.DeadLetters['Sortation Q'])} sortation, ${fmt(s.DeadLetters['Destination Q'])} destination; ${fmt(s.Delivery.DeadLettered)} since start`,
  );

  const st = s.Storage;
  badge($('storage-state'), st.State, 'Ok', 'Stalled');
  text(
    'storage-detail',
    [
      `last commit ${st.LastCommitMs ?? '–'} ms`,
      `${st.PendingWrites} writes pending`,
      st.WaitingFor && `waiting for the ${st.WaitingFor.toLowerCase()}`,
      st.ReadOnly && 'read-only',
      st.LastError,
    ]
      .filter(Boolean)
      .join(' · '),
  );

  const l = s.Sorter;
  if (s.TestMode) {
    $('link-state').className = 'badge';
    text('link-state', 'not used');
    text('link-detail', 'test mode replays Service_PLC.csv; no sorter is connected');
  } else {
    // Refusing: connected, but every telegram refused for a reason that will not pass by itself.
    badge($('link-state'), l.State === 'Refusing' ? 'refusing' : l.Connected ? 'connected' : 'disconnected', 'connected', '');
    text(
      'link-detail',
      [
        l.RefusingBecause,
        `${l.Address ?? ''}`,
        l.Since && `since ${time(l.Since)}`,
        `${fmt(l.Resends)} resends`,
        `${fmt(l.NaksSent)} NAKs sent`,
        `${fmt(l.NaksReceived)} received`,
        `${fmt(l.ConnectionsLost)} connections lost`,
      ]
        .filter(Boolean)
        .join(' · '),
    );
  }

  const t = d.Totals;
  // Over the last minute of the service's samples (steady, unlike one refresh's difference).
  const r = d.Rates;
  for (const q of ['sortation', 'destination']) {
    text(`rate-in-${q}`, rate(r.In[q]));
    text(`rate-out-${q}`, rate(r.Out[q]));
  }
  text('rate-telegrams-in', rate(r.TelegramsIn));
  text('rate-telegrams-out', rate(r.TelegramsOut));
  text(
    'rates-window',
    r.Seconds >= 59
      ? 'over the last minute'
      : r.Seconds > 0
        ? `over the last ${Math.max(1, Math.round(r.Seconds))} s (since start)`
        : 'from the first sample on',
  );
  text('total-received', fmt(t.Received.sortation + t.Received.destination));
  text('total-delivered', fmt(t.Delivered.sortation + t.Delivered.destination));
  text('total-telegrams-in', fmt(t.TelegramsIn));
  text('total-telegrams-out', fmt(t.TelegramsOut));

  chart(d.Decisions);
  rows('deliveries', d.Deliveries, (x) => [
    time(x.DeliveredAt),
    x.Queue,
    x.Type,
    x.TrackID,
    x.InductLocation,
    x.Destination,
    x.Client,
    `${fmt(x.WaitedMs)} ms`,
  ]);
  rows('telegrams', [...d.Telegrams].reverse(), (x) => [time(x.At), x.Direction, x.Telegram]);
  for (const part of window.dashboardRenderers) {
    try {
      part(d);
    } catch (err) {
      console.warn('a part of the dashboard could not be drawn', err);
    }
  }
}

/** The latest decisions' latency (ms) in order, drawn as bars on a canvas, with the p99 line. */
function chart(decisions) {
  const canvas = $('decision-chart');
  const ctx = canvas.getContext('2d');
  const w = canvas.width;
  const h = canvas.height;
  ctx.clearRect(0, 0, w, h);
  const ms = decisions.map((x) => x.Ms);
  const sorted = [...ms].sort((a, b) => a - b);
  const pct = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : null);
  text('decision-count', ms.length);
  text('decision-p50', pct(0.5) === null ? '–' : `${pct(0.5)} ms`);
  text('decision-p99', pct(0.99) === null ? '–' : `${pct(0.99)} ms`);
  ctx.font = '12px sans-serif';
  ctx.fillStyle = '#777';
  if (ms.length === 0) {
    ctx.fillText('no decisions yet: a WCS posting assignments for REQUESTs fills this chart', 10, h / 2);
    return;
  }
  const top = Math.max(1, sorted[sorted.length - 1]) * 1.1;
  const left = 50;
  const bar = (w - left) / Math.max(ms.length, 60);
  ctx.fillText(`${top.toFixed(0)} ms`, 2, 12);
  ctx.fillText('0', 2, h - 2);
  ctx.fillStyle = '#3b7dd8';
  ms.forEach((v, i) => {
    const bh = (v / top) * (h - 4);
    ctx.fillRect(left + i * bar, h - bh, Math.max(1, bar - 1), bh);
  });
  const p99 = h - (pct(0.99) / top) * (h - 4);
  ctx.strokeStyle = '#d83b3b';
  ctx.beginPath();
  ctx.moveTo(left, p99);
  ctx.lineTo(w, p99);
  ctx.stroke();
  ctx.fillStyle = '#d83b3b';
  ctx.fillText('p99', 2, Math.max(24, p99));
}

async function refresh() {
  try {
    const r = await getJson('/dashboard/data');
    if (!r) return;
    if (r.status !== 200 || !r.body)
      throw new Error(`GET /dashboard/data answered ${r.status}${r.body?.message ? `: ${r.body.message}` : ''}`);
    $('error').hidden = true;
    render(r.body);
  } catch (err) {
    $('error').hidden = false;
    $('error').textContent = `Cannot read the service: ${err.message}. Trying again.`;
  }
}

async function lookUp(trackId) {
  const out = $('item-result');
  out.replaceChildren();
  if (!trackId) return;
  const r = await getJson(`/items/${encodeURIComponent(trackId)}`);
  if (!r) return;
  if (r.status !== 200) {
    const p = document.createElement('p');
    p.className = r.status === 404 ? 'muted' : 'bad';
    p.textContent = r.body?.message ?? `answered ${r.status}`;
    out.append(p);
    return;
  }
  const table = document.createElement('table');
  table.id = 'item-timeline';
  const tbody = document.createElement('tbody');
  tbody.id = 'item-events';
  table.append(tbody);
  out.append(table);
  rows('item-events', r.body.Events, (e) => [time(e.Time), e.Event, e.Text]);
}

function start() {
  stop();
  void refresh();
  timer = setInterval(refresh, REFRESH_MS);
}

function stop() {
  if (timer) clearInterval(timer);
  timer = null;
}

$('key-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  sessionStorage.setItem(KEY_STORE, $('key').value);
  $('key-form').hidden = true;
  start();
});

$('item-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void lookUp($('item-id').value.trim());
});

// A service with ApiKeys set says so in the page: ask for the key before the first read.
if (document.body.dataset.keyRequired === 'true' && !sessionStorage.getItem(KEY_STORE)) askForKey('');
else start();
