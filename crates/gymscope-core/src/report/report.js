// The report's script, with query.js after it (one inline script, allowed by its hash in the
// page's Content-Security-Policy). It runs
// in <head> to mark the page as scripted at once, so the static fallbacks (`.nojs`: the first
// 1,000 task rows, the sampled SVG scatter) are never laid out; the rest waits for the DOM. It reads
// the JSON data block and makes the static page interactive: the full task table (sortable,
// filtered by a query of the query language, paged: 25,000 rows are never all in the DOM), the
// scatter of every rollout on a canvas with hover, and #task=N&rollout=R deep links. It never builds HTML from strings: every
// text goes in through textContent, so nothing from the data can become markup.
'use strict';
document.documentElement.setAttribute('data-js', '');
document.addEventListener('DOMContentLoaded', function () {
  const started = performance.now();
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const $ = (id) => document.getElementById(id);
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  // Same rules as the Rust side's table::short_number (the data holds numbers already rounded
  // to that text, so both tables read the same).
  function shortNumber(v) {
    if (!isFinite(v)) return '∞';
    const a = Math.abs(v);
    if (a >= 1e9 || (v !== 0 && a < 1e-4)) return v.toExponential(3).replace('e+', 'e');
    const s = v.toFixed(4).replace(/0+$/, '').replace(/\.$/, '');
    return s === '-0' ? '0' : s;
  }
  const fmt = (v) => (v === null ? '–' : typeof v === 'string' ? v : shortNumber(v));
  const sortKey = (v) => (typeof v === 'number' ? v : v === null ? NaN : Infinity);

  // ---- rollouts: the task of each point, and each task's range of points
  const P = data.points;
  const nPoints = P.rollout.length;
  const taskOf = new Array(nPoints);
  const taskRunOf = new Int32Array(nPoints); // the task's entry in data.task_stats
  const pointsOf = new Map();
  for (let i = 0, at = 0; i < P.task_runs.length; i += 2) {
    const t = P.task_runs[i], n = P.task_runs[i + 1];
    pointsOf.set(t, [at, n]);
    for (let k = 0; k < n; k++) { taskOf[at + k] = t; taskRunOf[at + k] = i / 2; }
    at += n;
  }

  // ---- the task table
  const T = data.tasks;
  const nTasks = T.key.length;
  const rowOf = new Map(T.key.map((k, i) => [k, i]));
  const PAGE = 100;
  const state = { rows: [...Array(nTasks).keys()], col: null, dir: 1, page: 0, selected: null, mask: null, matched: 0, made: false };
  const value = (c, i) => (c < 0 ? T.key[i] : T.cols[c][i]);

  // ---- the filter box: an expression of the query language (query.js) over this report's
  // columns; a task shows when any of its rollouts matches, the scatter shows the matches. The
  // query the report was made with (data.query) is answered by its stored matches, whatever it
  // reads (text, health, tools), since the core found them in the run's files.
  const S = data.task_stats;
  const pointField = new Map(P.fields.map((f, k) => [f, k]));
  const taskColumn = new Map(T.headers.map((h, c) => [h, c]));
  const cols = {
    pointNames: () => ['reward'].concat(P.fields),
    taskNames: () => T.headers.map((h) => '`' + h + '`'),
    column(f) {
      switch (f.k) {
        case 'task': return { kind: 'any', get: (i) => taskOf[i] };
        case 'rollout': return { kind: 'any', get: (i) => P.rollout[i] };
        case 'agent': return { kind: 'text', get: (i) => (P.agent && P.agent[i] !== null ? P.agents[P.agent[i]] : null) };
        case 'reward': return { kind: 'number', get: (i) => P.reward[i] };
        case 'task.mean_reward': return { kind: 'any', get: (i) => S.mean_reward[taskRunOf[i]] };
        case 'task.pass_rate': return { kind: 'any', get: (i) => S.pass_rate[taskRunOf[i]] };
        case 'task.group': return { kind: 'text', get: (i) => S.group[taskRunOf[i]] };
        case 'path': case 'usage': {
          if (f.path.length !== 1) return null;
          const name = f.path[0];
          if (name === 'reward') return { kind: 'number', get: (i) => P.reward[i] };
          if (pointField.has(name)) { const col = P.values[pointField.get(name)]; return { kind: 'number', get: (i) => col[i] }; }
          if (f.k === 'path' && taskColumn.has(name)) {
            const col = T.cols[taskColumn.get(name)];
            return { kind: 'number', get: (i) => col[rowOf.get(taskOf[i])] };
          }
          return null;
        }
        default: return null;
      }
    },
  };
  const Q = data.query || null;
  function storedMatches() {
    const mask = new Uint8Array(nPoints);
    for (let k = 0; k < Q.keys.length; k += 2) {
      const [at, n] = pointsOf.get(Q.keys[k]) || [0, 0];
      for (let i = at; i < at + n; i++) if (P.rollout[i] === Q.keys[k + 1]) mask[i] = 1;
    }
    return mask;
  }
  // Per point whether it matches `text` (null: no filter); throws a message for the user.
  function filterMask(text) {
    if (!text.trim()) return null;
    if (Q && text.trim() === Q.source.trim()) return storedMatches();
    const test = GymQuery.compile(GymQuery.parse(text, data.health_flags), cols);
    const mask = new Uint8Array(nPoints);
    for (let i = 0; i < nPoints; i++) mask[i] = test(i) ? 1 : 0;
    return mask;
  }

  function overlayLabel(curves) {
    if (!curves) return ' (not drawn for this filter: the page holds the curves of the run and of its own query)';
    const o = curves[plot.x] && curves[plot.x][0];
    return o ? ' (10 quantile bins, ' + o.interval + (state.mask ? ', of the matches' : '') + ')' : '';
  }

  function applyView() {
    const error = $('task-filter-error');
    let mask = null;
    try {
      mask = filterMask($('task-filter').value);
      error.textContent = '';
    } catch (e) {
      error.textContent = e instanceof Error ? e.message : String(e);
    }
    state.mask = mask;
    state.matched = 0;
    // The sections of the query the page was made with while the box holds it; else the run's.
    state.made = false;
    if (Q) {
      const made = $('task-filter').value.trim() === Q.source.trim();
      state.made = made;
      for (const el of document.querySelectorAll('[data-of]')) {
        el.hidden = (el.getAttribute('data-of') === 'query') !== made;
      }
    }
    let rows = [];
    for (let i = 0; i < nTasks; i++) {
      if (!mask) { rows.push(i); continue; }
      const [at, n] = pointsOf.get(T.key[i]) || [0, 0];
      let any = false;
      for (let p = at; p < at + n; p++) if (mask[p]) { any = true; state.matched++; }
      if (any) rows.push(i);
    }
    if (state.col !== null) {
      const c = state.col, d = state.dir;
      rows.sort((a, b) => {
        const x = sortKey(value(c, a)), y = sortKey(value(c, b));
        if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) - Number.isNaN(y) || a - b; // missing last
        return (x - y) * d || a - b;
      });
    }
    state.rows = rows;
    state.page = Math.min(state.page, Math.max(0, Math.ceil(rows.length / PAGE) - 1));
    drawTable();
    if (plot.grid) drawScatter();
  }

  function drawTable() {
    const table = $('task-table');
    const tbody = el('tbody');
    const start = state.page * PAGE;
    for (const i of state.rows.slice(start, start + PAGE)) {
      const tr = el('tr', null, 'link');
      tr.dataset.task = T.key[i];
      if (T.key[i] === state.selected) tr.classList.add('selected');
      tr.appendChild(el('th', String(T.key[i])));
      for (let c = 0; c < T.headers.length; c++) tr.appendChild(el('td', fmt(T.cols[c][i])));
      tbody.appendChild(tr);
    }
    table.replaceChild(tbody, table.tBodies[0]);
    const pages = Math.max(1, Math.ceil(state.rows.length / PAGE));
    $('task-count').textContent = state.rows.length + ' of ' + nTasks + ' tasks' +
      (state.mask ? ' · ' + state.matched + ' of ' + nPoints + ' rollouts match' : '');
    $('task-page').textContent = 'page ' + (state.page + 1) + ' of ' + pages;
    $('task-prev').disabled = state.page === 0;
    $('task-next').disabled = state.page >= pages - 1;
  }

  function setupTable() {
    const table = $('task-table');
    const ths = table.tHead.rows[0].cells;
    for (let c = 0; c < ths.length; c++) {
      const th = ths[c];
      th.classList.add('sortable');
      th.title = 'sort';
      th.addEventListener('click', () => {
        const col = c - 1;
        if (state.col === col) state.dir = -state.dir;
        else { state.col = col; state.dir = col < 0 ? 1 : -1; }
        for (const other of ths) other.removeAttribute('aria-sort');
        th.setAttribute('aria-sort', state.dir > 0 ? 'ascending' : 'descending');
        applyView();
      });
    }
    const pager = $('task-pager');
    const prev = el('button', '‹ prev'), next = el('button', 'next ›');
    prev.id = 'task-prev'; next.id = 'task-next';
    const label = el('span'); label.id = 'task-page';
    prev.addEventListener('click', () => { state.page--; drawTable(); });
    next.addEventListener('click', () => { state.page++; drawTable(); });
    pager.append(prev, label, next);
    let timer = 0;
    $('task-filter').addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => { state.page = 0; applyView(); }, 120); });
    table.addEventListener('click', (e) => {
      const tr = e.target.closest('tbody tr');
      if (tr && tr.dataset.task !== undefined) location.hash = 'task=' + tr.dataset.task;
    });
    $('task-controls').hidden = false;
    if (Q) $('task-filter').value = Q.source;
    applyView(); // replaces the static rows with the first page
    $('task-table-wrap').classList.remove('nojs');
  }

  // ---- the scatter: every rollout on a canvas; hover names the task and rollout
  const W = 640, H = 300, LEFT = 60, RIGHT = 12, TOP = 12, BOTTOM = 40;
  const plot = { x: P.x, px: null, py: null, grid: null, hidden: new Set() };
  // Agents (the app's colours and legend), when the data names them; discrete rewards jittered
  // by a fixed amount per task and rollout, as the app and the static SVG do.
  const agentOf = P.agent || null;
  const distinct = new Set();
  for (const r of P.reward) { if (r !== null) distinct.add(r); if (distinct.size > 12) break; }
  const jitter = distinct.size <= 12;
  function offset(task, rollout) {
    let h = Math.imul(task | 0, 0x9E3779B1) ^ Math.imul((rollout | 0) + 0x7F4A7C15, 0x85EBCA77);
    h ^= h >>> 15; h = Math.imul(h, 0x2C1B3C6D); h ^= h >>> 12; h = Math.imul(h, 0x297A2D39); h ^= h >>> 15;
    return (h >>> 0) / 4294967296 * 2 - 1;
  }
  const hexRgba = (hex, a) => 'rgba(' + parseInt(hex.slice(1, 3), 16) + ',' + parseInt(hex.slice(3, 5), 16) + ',' + parseInt(hex.slice(5, 7), 16) + ',' + a + ')';

  function drawScatter() {
    const canvas = $('scatter-canvas');
    const dpr = window.devicePixelRatio || 1;
    canvas.width = W * dpr; canvas.height = H * dpr;
    const g = canvas.getContext('2d');
    g.scale(dpr, dpr);
    const xs = P.values[plot.x], ys = P.reward;
    const shown = (i) => xs[i] !== null && ys[i] !== null && !(agentOf && agentOf[i] !== null && plot.hidden.has(agentOf[i])) &&
      (!state.mask || state.mask[i] === 1);
    // The axes come from the plot model (Rust), as the app's do: same domain, same round ticks.
    const [ax, ay] = P.scales[plot.x];
    const [x0, x1, y0, y1] = [ax.lo, ax.hi, ay.lo, ay.hi];
    const sx = (v) => LEFT + ((v - x0) / (x1 - x0)) * (W - LEFT - RIGHT);
    const sy = (v) => H - BOTTOM - ((v - y0) / (y1 - y0)) * (H - TOP - BOTTOM);
    const band = 0.025 * (H - TOP - BOTTOM);
    const style = getComputedStyle(document.body);
    g.clearRect(0, 0, W, H);
    g.strokeStyle = '#999'; g.strokeRect(LEFT, TOP, W - LEFT - RIGHT, H - TOP - BOTTOM);
    g.fillStyle = style.color; g.font = '11px system-ui, sans-serif';
    g.textAlign = 'center';
    for (const t of ax.ticks) g.fillText(shortNumber(t), sx(t), H - BOTTOM + 14);
    g.textAlign = 'right';
    for (const t of ay.ticks) g.fillText(shortNumber(t), LEFT - 4, sy(t) + 4);
    g.textAlign = 'center'; g.fillText(P.fields[plot.x].replace(/_/g, ' ') + ' →', (LEFT + W - RIGHT) / 2, H - 6);
    g.save(); g.translate(14, (TOP + H - BOTTOM) / 2); g.rotate(-Math.PI / 2); g.fillText('reward →', 0, 0); g.restore();
    plot.px = new Float32Array(nPoints); plot.py = new Float32Array(nPoints);
    plot.grid = new Map();
    const fills = (P.colours || ['#3366cc']).map((c) => hexRgba(c, 0.4));
    g.fillStyle = fills[0];
    for (let i = 0; i < nPoints; i++) {
      if (!shown(i)) { plot.px[i] = NaN; continue; }
      const x = sx(xs[i]), y = sy(ys[i]) + (jitter ? offset(taskOf[i], P.rollout[i]) * band : 0);
      plot.px[i] = x; plot.py[i] = y;
      if (agentOf) g.fillStyle = fills[agentOf[i] === null ? 0 : agentOf[i] % fills.length];
      g.fillRect(x - 1.5, y - 1.5, 3, 3);
      const key = ((x / 8) | 0) * 4096 + ((y / 8) | 0);
      const cell = plot.grid.get(key);
      if (cell) cell.push(i); else plot.grid.set(key, [i]);
    }
    // The binned mean reward per agent with its 95% interval (computed by the plot model), of
    // the points shown: the run's, or the matches of the query the page was made with. Another
    // filter's would need the model: none is drawn then, and the label says so.
    const curves = !state.mask ? P.overlay : state.made ? P.overlay_query : null;
    $('scatter-overlay-label').textContent = overlayLabel(curves);
    if ($('scatter-overlay').checked && curves) {
      for (const o of curves[plot.x] || []) {
        if (!o.bins.length || (o.agent !== null && plot.hidden.has(o.agent))) continue;
        const c = o.agent === null || !P.colours ? '#6e6e6e' : P.colours[o.agent % P.colours.length];
        const at = (b, k) => [sx(b[0]), sy(Math.min(y1, Math.max(y0, b[k])))];
        g.beginPath();
        o.bins.forEach((b, k) => { const [x, y] = at(b, 3); if (k) g.lineTo(x, y); else g.moveTo(x, y); });
        for (let k = o.bins.length - 1; k >= 0; k--) { const [x, y] = at(o.bins[k], 2); g.lineTo(x, y); }
        g.closePath(); g.fillStyle = hexRgba(c, 0.15); g.fill();
        g.beginPath();
        o.bins.forEach((b, k) => { const [x, y] = at(b, 1); if (k) g.lineTo(x, y); else g.moveTo(x, y); });
        g.lineWidth = 2; g.strokeStyle = c; g.stroke();
      }
    }
    if (state.selected !== null && pointsOf.has(state.selected)) {
      const [at, n] = pointsOf.get(state.selected);
      g.fillStyle = '#dc143c';
      for (let i = at; i < at + n; i++) if (!Number.isNaN(plot.px[i])) g.fillRect(plot.px[i] - 3, plot.py[i] - 3, 6, 6);
    }
  }

  // The legend: one button per agent; a click shows or hides its rollouts and curve.
  function setupLegend() {
    const legend = $('scatter-legend');
    if (!agentOf || !P.agents) return;
    P.agents.forEach((name, a) => {
      const b = el('button', null, 'legend-item');
      const swatch = el('span', null, 'swatch');
      swatch.style.background = P.colours[a % P.colours.length];
      b.append(swatch, document.createTextNode(name));
      b.dataset.agent = name;
      b.setAttribute('aria-pressed', 'true');
      b.addEventListener('click', () => {
        if (plot.hidden.has(a)) plot.hidden.delete(a); else plot.hidden.add(a);
        b.setAttribute('aria-pressed', String(!plot.hidden.has(a)));
        drawScatter();
      });
      legend.appendChild(b);
    });
  }

  function nearest(x, y) {
    let best = -1, bestD = 36; // within 6 px
    const cx = (x / 8) | 0, cy = (y / 8) | 0;
    for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) {
      for (const i of plot.grid.get((cx + dx) * 4096 + cy + dy) || []) {
        const d = (plot.px[i] - x) ** 2 + (plot.py[i] - y) ** 2;
        if (d < bestD) { bestD = d; best = i; }
      }
    }
    return best;
  }

  function setupScatter() {
    if (!$('scatter-canvas') || plot.x === null) return;
    const select = $('scatter-x');
    P.fields.forEach((f, i) => { const o = el('option', f); o.value = String(i); select.appendChild(o); });
    select.value = String(plot.x);
    select.addEventListener('change', () => { plot.x = Number(select.value); $('scatter-x-name').textContent = P.fields[plot.x]; drawScatter(); });
    const canvas = $('scatter-canvas'), tip = $('scatter-tip');
    const at = (e) => { const r = canvas.getBoundingClientRect(); return [((e.clientX - r.left) * W) / r.width, ((e.clientY - r.top) * H) / r.height]; };
    canvas.addEventListener('mousemove', (e) => {
      const [x, y] = at(e);
      const i = nearest(x, y);
      if (i < 0) { tip.hidden = true; canvas.style.cursor = ''; return; }
      tip.textContent = 'task ' + taskOf[i] + ' · rollout ' + P.rollout[i] + '\nreward ' + fmt(P.reward[i]) + ' · ' + P.fields[plot.x] + ' ' + fmt(P.values[plot.x][i]);
      tip.hidden = false;
      tip.style.left = (e.clientX - canvas.getBoundingClientRect().left + 12) + 'px';
      tip.style.top = (e.clientY - canvas.getBoundingClientRect().top + 12) + 'px';
      canvas.style.cursor = 'pointer';
    });
    canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
    canvas.addEventListener('click', (e) => {
      const [x, y] = at(e);
      const i = nearest(x, y);
      if (i >= 0) location.hash = 'task=' + taskOf[i] + '&rollout=' + P.rollout[i];
    });
    setupLegend();
    $('scatter-overlay').addEventListener('change', drawScatter);
    $('scatter-static').hidden = true;
    $('scatter-live').hidden = false;
    $('scatter-controls').hidden = false;
    drawScatter();
  }

  // ---- deep links: #task=N and #task=N&rollout=R open that task (and rollout) and scroll to it
  function builtDetail(task) {
    const d = el('details', null, 'task');
    d.id = 'task-' + task;
    const row = rowOf.get(task);
    const [at, n] = pointsOf.get(task) || [0, 0];
    const mean = T.headers.indexOf('mean/reward');
    d.appendChild(el('summary', 'Task ' + task + ' · ' + n + ' rollouts' + (mean >= 0 ? ' · mean reward ' + fmt(T.cols[mean][row]) : '')));
    d.appendChild(el('p', 'This report includes no conversation for this task; its rollouts’ numbers:', 'note'));
    const wrap = el('div', null, 'scroll');
    const table = el('table');
    const head = el('tr');
    for (const h of ['rollout', 'reward'].concat(P.fields)) head.appendChild(el('th', h));
    table.appendChild(el('thead')).appendChild(head);
    const body = table.appendChild(el('tbody'));
    for (let i = at; i < at + n; i++) {
      const tr = el('tr');
      tr.id = 'task-' + task + '-rollout-' + P.rollout[i];
      tr.appendChild(el('th', String(P.rollout[i])));
      tr.appendChild(el('td', fmt(P.reward[i])));
      for (const column of P.values) tr.appendChild(el('td', fmt(column[i])));
      body.appendChild(tr);
    }
    wrap.appendChild(table);
    d.appendChild(wrap);
    $('task-details').prepend(d);
    return d;
  }

  function openFromHash() {
    const m = location.hash.match(/^#task=(-?\d+)(?:&rollout=(-?\d+))?$/);
    if (!m) return;
    const task = Number(m[1]);
    if (!rowOf.has(task)) return;
    for (const old of document.querySelectorAll('.selected')) old.classList.remove('selected');
    state.selected = task;
    let target = $('task-' + task) || builtDetail(task);
    target.open = true;
    target.classList.add('selected');
    if (m[2] !== undefined) {
      const r = $('task-' + task + '-rollout-' + m[2]);
      if (r) { if (r.tagName === 'DETAILS') r.open = true; r.classList.add('selected'); target = r; }
    }
    drawTable();
    if (plot.grid) drawScatter();
    target.scrollIntoView({ block: 'start' });
  }

  setupTable();
  setupScatter();
  window.addEventListener('hashchange', openFromHash);
  openFromHash();
  // For tests and the benchmark: when the page became interactive, and the script's share of it.
  document.documentElement.setAttribute('data-ready', String(Math.round(performance.now())));
  document.documentElement.setAttribute('data-script-ms', String(Math.round(performance.now() - started)));
});
