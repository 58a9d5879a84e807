// The last hour in charts: the feed's LastHour samples (one every ChartSampleSeconds, an hour
// kept in the service's memory) drawn with uPlot, served from the service's node_modules.
// Each chart's element carries data-points, the samples it draws.
'use strict';

(function charts() {
  const $ = (id) => document.getElementById(id);
  const COLORS = {
    items: '#1d2330',
    inSort: '#3b7dd8',
    outSort: '#1f8a4c',
    inDest: '#b7791f',
    p50: '#3b7dd8',
    p99: '#c53030',
    late: '#b7791f',
    sortation: '#3b7dd8',
    destination: '#b7791f',
    oldest: '#c53030',
    link: '#1f8a4c',
  };
  const made = {};
  let lastAt = null;

  const line = (label, stroke, extra = {}) => ({ label, stroke, width: 2, spanGaps: false, ...extra });
  const rightAxis = (label) => ({ scale: 'right', side: 1, label, grid: { show: false } });

  /** Each chart: its series (after time) and how a sample gives their values. */
  const DEFS = {
    'chart-rates': {
      series: [
        line('items/s (REQUESTs)', COLORS.items),
        line('sortation in/s', COLORS.inSort),
        line('sortation to WCS/s', COLORS.outSort, { dash: [6, 4] }),
        line('destination in/s', COLORS.inDest),
      ],
      values: (x) => [x.Items, x.In.sortation, x.Out.sortation, x.In.destination],
      axes: [{ label: 'per second' }],
    },
    'chart-decisions': {
      series: [
        line('p50 ms', COLORS.p50),
        line('p99 ms', COLORS.p99),
        line('late', COLORS.late, { scale: 'right', width: 1, fill: 'rgba(183,121,31,0.2)' }),
      ],
      values: (x) => [x.DecisionP50Ms, x.DecisionP99Ms, x.LateDecisions],
      axes: [{ label: 'ms' }, rightAxis('late decisions')],
    },
    'chart-queues': {
      series: [
        line('sortation waiting', COLORS.sortation),
        line('destination waiting', COLORS.destination),
        line('oldest age s', COLORS.oldest, { scale: 'right', dash: [4, 4] }),
      ],
      values: (x) => [x.Depth.sortation, x.Depth.destination, x.OldestAgeSeconds ?? 0],
      axes: [{ label: 'messages' }, rightAxis('seconds')],
    },
    'chart-link': {
      series: [line('link up', COLORS.link, { paths: uPlot.paths.stepped({ align: 1 }), fill: 'rgba(31,138,76,0.15)' })],
      values: (x) => [x.LinkUp],
      axes: [{ label: 'up', values: (u, ticks) => ticks.map((v) => (v === 1 ? 'up' : v === 0 ? 'down' : '')) }],
      scales: { y: { range: [0, 1.1] } },
    },
  };

  function size(el) {
    return { width: Math.max(260, el.clientWidth), height: 170 };
  }

  function make(id, def, data) {
    const el = $(id);
    const opts = {
      ...size(el),
      legend: { live: false },
      // 24-hour clock and ISO dates, as the rest of the page.
      fmtDate: (tpl) =>
        uPlot.fmtDate(
          tpl
            .replace(/\{h\}/g, '{HH}')
            .replace(/\{aa\}/g, '')
            .replace('{M}/{D}/{YY}', '{YYYY}-{MM}-{DD}')
            .replace('{M}/{D}', '{MM}-{DD}'),
        ),
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, right: { range: (u, min, max) => [0, Math.max(1, max)] }, ...def.scales },
      series: [{ label: 'time' }, ...def.series],
      axes: [{}, ...def.axes],
    };
    made[id] = new uPlot(opts, data, el);
  }

  function draw(lastHour) {
    const samples = lastHour.Samples;
    $('sample-seconds').textContent = String(lastHour.SampleSeconds);
    $('late-ms').textContent = String(lastHour.LateDecisionMs);
    const at = samples.length ? samples[samples.length - 1].At : null;
    if (at === lastAt && Object.keys(made).length) return;
    lastAt = at;
    const xs = samples.map((x) => Date.parse(x.At) / 1000);
    for (const [id, def] of Object.entries(DEFS)) {
      const columns = def.series.map((_, i) => samples.map((x) => def.values(x)[i]));
      const data = [xs, ...columns];
      if (made[id]) made[id].setData(data);
      else make(id, def, data);
      $(id).dataset.points = String(samples.length);
    }
  }

  // The charts follow the page's width (a tablet turned, a window resized).
  window.addEventListener('resize', () => {
    for (const [id, chart] of Object.entries(made)) chart.setSize(size($(id)));
  });

  window.dashboardRenderers = window.dashboardRenderers || [];
  window.dashboardRenderers.push((d) => {
    if (typeof uPlot === 'undefined') throw new Error('the charting library (uPlot) did not load');
    draw(d.LastHour);
  });
})();
