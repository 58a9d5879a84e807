// The destinations board: one tile a destination from the feed's Board (the table
// destination_board), its counts per status and a filter. Every colour has its word beside it,
// for readers who do not tell the colours apart.
'use strict';

(function board() {
  const $ = (id) => document.getElementById(id);
  const STATUS_TEXT = { Ready: 'Ready', NotReady: 'Not ready' };
  let latest = [];

  const time = (iso) => (iso ? new Date(iso).toLocaleTimeString('en-GB', { hour12: false }) : '–');
  const day = (iso) =>
    iso && new Date(iso).toDateString() !== new Date().toDateString() ? `${new Date(iso).toLocaleDateString('en-GB')} ` : '';

  /** The lamp as the light shows it, in words: "red, flashing", "green, solid", "off". */
  function lampText(status, color) {
    if (status === 'Off' || color === 'Off') return 'off';
    return `${color.toLowerCase()}, ${status.toLowerCase()}`;
  }

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function line(label, value) {
    const p = el('div', 'tile-line');
    p.append(el('span', 'muted', `${label} `), el('span', '', value));
    return p;
  }

  function tile(t) {
    const disagrees = t.Wcs?.Agreement === 'Disagrees';
    const div = el('div', `tile status-${t.DestinationStatus === 'Ready' ? 'ready' : 'notready'}${disagrees ? ' disagrees' : ''}`);
    div.dataset.destination = t.Destination;
    div.dataset.status = t.DestinationStatus;

    const head = el('div', 'tile-head');
    head.append(
      el('span', 'tile-name', t.Destination),
      el(
        'span',
        `badge ${t.DestinationStatus === 'Ready' ? 'good' : 'bad'} tile-status`,
        STATUS_TEXT[t.DestinationStatus] ?? t.DestinationStatus,
      ),
    );
    div.append(head);

    const lamp = el('div', 'tile-lamp');
    const off = t.LightStatus === 'Off' || t.LightColor === 'Off';
    const bulb = el(
      'span',
      `lamp lamp-${off ? 'off' : t.LightColor.toLowerCase()}${!off && t.LightStatus === 'Flashing' ? ' lamp-flashing' : ''}`,
    );
    bulb.setAttribute('aria-hidden', 'true');
    lamp.append(bulb, el('span', 'lamp-text', `lamp ${lampText(t.LightStatus, t.LightColor)}`));
    div.append(lamp);

    div.append(el('div', 'tile-display', t.DestinationText ? `“${t.DestinationText}”` : '(no display text)'));
    div.append(
      line('batch door', t.BatchDoorStatus ? t.BatchDoorStatus.toLowerCase() : '–'),
      line('button', t.ButtonID === null ? '–' : String(t.ButtonID)),
    );
    div.append(
      el(
        'div',
        'tile-changed muted',
        `changed ${day(t.ChangedAt)}${time(t.ChangedAt)} by ${t.ChangedBy === 'sorter' ? 'the sorter' : `the WCS (${t.ChangedBy})`}`,
      ),
    );
    if (t.Wcs) {
      const w = t.Wcs;
      const set = `${STATUS_TEXT[w.DestinationStatus] ?? w.DestinationStatus}, lamp ${lampText(w.LightStatus, w.LightColor)}`;
      const verdict =
        w.Agreement === 'Disagrees'
          ? `⚠ differs from the WCS's setting (${set}, ${time(w.SetAt)})`
          : w.Agreement === 'Pending'
            ? `WCS setting at ${time(w.SetAt)}: waiting for the sorter's SCAN`
            : `the sorter confirmed the WCS's setting of ${time(w.SetAt)}`;
      div.append(el('div', `tile-wcs${w.Agreement === 'Disagrees' ? ' bad' : ' muted'}`, verdict));
      div.dataset.agreement = w.Agreement;
    }
    return div;
  }

  function shown(t) {
    const filter = $('board-filter').value;
    const search = $('board-search').value.trim().toLowerCase();
    if (filter === 'disagrees' && t.Wcs?.Agreement !== 'Disagrees') return false;
    if ((filter === 'Ready' || filter === 'NotReady') && t.DestinationStatus !== filter) return false;
    return !search || t.Destination.toLowerCase().includes(search) || t.DestinationText.toLowerCase().includes(search);
  }

  function draw() {
    const tiles = latest;
    const ready = tiles.filter((t) => t.DestinationStatus === 'Ready').length;
    const disagreeing = tiles.filter((t) => t.Wcs?.Agreement === 'Disagrees').length;
    const counts = $('board-counts');
    counts.replaceChildren(
      el('span', 'count count-ready', `Ready ${ready}`),
      el('span', 'count count-notready', `Not ready ${tiles.length - ready}`),
      el('span', `count ${disagreeing ? 'count-disagrees' : 'muted'}`, `disagreeing ${disagreeing}`),
      el('span', 'muted', `of ${tiles.length} destinations`),
    );
    const visible = tiles.filter(shown);
    const boardEl = $('board');
    if (tiles.length === 0)
      boardEl.replaceChildren(
        el('p', 'muted', "No destination yet: the board fills with the sorter's SCANs and the WCS's POST /destination."),
      );
    else if (visible.length === 0) boardEl.replaceChildren(el('p', 'muted', 'No destination matches the filter.'));
    else boardEl.replaceChildren(...visible.map(tile));
  }

  $('board-filter').addEventListener('change', draw);
  $('board-search').addEventListener('input', draw);
  window.dashboardRenderers = window.dashboardRenderers || [];
  window.dashboardRenderers.push((d) => {
    // Redrawn only when the feed's board changed: a filter or a search box keeps its focus and the tiles do not flicker.
    const json = JSON.stringify(d.Board);
    if (json === draw.last) return;
    draw.last = json;
    latest = d.Board;
    draw();
  });
})();
