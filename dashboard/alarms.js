// The dashboard's alarms: a banner while any alarm is active and not acknowledged, with a button
// that acknowledges it (POST /alarms/{id}/ack), and the journal of the last 7 days. Reads
// GET /alarms every ALARM_REFRESH_MS with the key the page keeps for this browser tab.
'use strict';

(() => {
  const ALARM_REFRESH_MS = Number(new URLSearchParams(location.search).get('refresh')) || 2000;
  // The key the page asked for (dashboard.js), kept in this tab's sessionStorage.
  const KEY_STORE = 'sorter-integration-api-key';
  const el = (id) => document.getElementById(id);
  const headers = (extra = {}) => {
    const key = sessionStorage.getItem(KEY_STORE);
    return key ? { ...extra, 'X-API-Key': key } : extra;
  };
  const when = (iso) => (iso ? new Date(iso).toLocaleString('en-GB', { hour12: false }) : '');
  const cell = (text, className) => {
    const td = document.createElement('td');
    td.textContent = text ?? '';
    if (className) td.className = className;
    return td;
  };

  /** The banner: the active alarms nobody has acknowledged yet, the worst first. */
  function banner(active) {
    const open = active.filter((a) => !a.AcknowledgedAt);
    const box = el('alarm-banner');
    box.hidden = open.length === 0;
    box.className = open.every((a) => a.Severity === 'warning') ? 'warning' : '';
    const order = { critical: 0, major: 1, warning: 2 };
    const items = open
      .sort((a, b) => order[a.Severity] - order[b.Severity] || a.Id - b.Id)
      .map((a) => {
        const li = document.createElement('li');
        li.dataset.alarmId = a.Id;
        li.dataset.code = a.Code;
        const parts = [
          ['severity', a.Severity.toUpperCase()],
          ['code', a.Code],
          ['detail', a.Detail],
          ['since', `since ${when(a.RaisedAt)}`],
        ];
        for (const [cls, text] of parts) {
          const span = document.createElement('span');
          span.className = cls;
          span.textContent = text;
          li.append(span);
        }
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'ack';
        button.textContent = 'Acknowledge';
        button.addEventListener('click', () => void acknowledge(a.Id));
        li.append(button);
        const todo = document.createElement('span');
        todo.className = 'todo';
        todo.textContent = `What to do: ${a.WhatToDo}`;
        li.append(todo);
        return li;
      });
    el('alarm-list').replaceChildren(...items);
  }

  /** The journal: every alarm of the last 7 days, newest first, with who acknowledged it and when. */
  function journal(rows) {
    el('alarm-journal').replaceChildren(
      ...rows.map((a) => {
        const tr = document.createElement('tr');
        tr.dataset.alarmId = a.Id;
        if (!a.ClearedAt) tr.className = 'active';
        tr.append(
          cell(a.ClearedAt ? 'cleared' : 'active'),
          cell(a.Severity, `sev-${a.Severity}`),
          cell(a.Code),
          cell(a.Detail, 'detail'),
          cell(when(a.RaisedAt)),
          cell(when(a.ClearedAt)),
          cell(a.AcknowledgedBy ? `${a.AcknowledgedBy}, ${when(a.AcknowledgedAt)}` : '', 'acked'),
        );
        return tr;
      }),
    );
    el('alarm-count').textContent = String(rows.length);
  }

  function problem(message) {
    el('alarm-error').textContent = message;
  }

  async function refresh() {
    // The page has not been given a key yet (it asks for one first): nothing to read with.
    if (document.body.dataset.keyRequired === 'true' && !sessionStorage.getItem(KEY_STORE)) return;
    try {
      const res = await fetch('/alarms?days=7', { headers: headers(), cache: 'no-store' });
      if (res.status === 401 || res.status === 403)
        return problem(`The alarms cannot be read with this key (${res.status}): an operator or monitor key is needed.`);
      const body = await res.json();
      if (res.status !== 200) return problem(`GET /alarms answered ${res.status}: ${body?.message ?? ''}`);
      problem('');
      banner(body.Active);
      journal(body.Journal);
    } catch (err) {
      problem(`Cannot read the alarms: ${err.message}. Trying again.`);
    }
  }

  async function acknowledge(id) {
    const res = await fetch(`/alarms/${id}/ack`, { method: 'POST', headers: headers(), cache: 'no-store' });
    if (res.status === 403) problem('Acknowledging needs an operator key: this key may only look.');
    else if (res.status !== 200) problem(`Acknowledging alarm ${id} answered ${res.status}.`);
    await refresh();
  }

  void refresh();
  setInterval(refresh, ALARM_REFRESH_MS);
})();
