// The comparison report's only script (allowed by its hash in the page's CSP). It makes the
// static page interactive: every count, mark and bar filters the paired-task table, the table
// sorts and pages through all tasks, a row opens its side-by-side conversations, and
// #task=N (A's task index) links to a task. Text goes in through textContent only.
'use strict';
document.documentElement.setAttribute('data-js', '');
document.addEventListener('DOMContentLoaded', function () {
  const data = JSON.parse(document.getElementById('compare-data').textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  };
  const T = data.tasks;
  const n = T.task_a.length;
  const hasPair = new Set(data.pairs);
  function shortNumber(v) {
    if (v === null) return '–';
    const a = Math.abs(v);
    if (a >= 1e9 || (v !== 0 && a < 1e-4)) return v.toExponential(3).replace('e+', 'e');
    const s = v.toFixed(4).replace(/0+$/, '').replace(/\.$/, '');
    return s === '-0' ? '0' : s;
  }
  const signed = (v) => (v === null ? '–' : v > 0 ? '+' + shortNumber(v) : shortNumber(v));
  // Token means as people read them: whole, with separators (crate::figures::tokens).
  const tokens = (v) => (v === null ? '–' : Math.round(v).toLocaleString('en-US'));
  const agentName = (i) => data.agents[i] || '(no agent)';
  const cols = [
    (i) => T.task_a[i], (i) => T.task_b[i], (i) => agentName(T.agent[i]), (i) => T.mean_a[i], (i) => T.mean_b[i],
    (i) => T.delta[i], (i) => T.group_a[i], (i) => T.group_b[i], (i) => T.tokens_a[i], (i) => T.tokens_b[i],
  ];
  const show = [
    (i) => String(T.task_a[i]), (i) => String(T.task_b[i]), (i) => agentName(T.agent[i]), (i) => shortNumber(T.mean_a[i]),
    (i) => shortNumber(T.mean_b[i]), (i) => signed(T.delta[i]), (i) => data.groups[T.group_a[i]],
    (i) => data.groups[T.group_b[i]], (i) => tokens(T.tokens_a[i]), (i) => tokens(T.tokens_b[i]),
  ];
  const PAGE = 100;
  const state = { filter: null, agent: '', search: '', col: null, dir: 1, page: 0, rows: [] };

  function setFilter(label, test, source) {
    for (const on of document.querySelectorAll('.on')) on.classList.remove('on');
    state.filter = test ? { label, test } : null;
    if (test && source) source.classList.add('on');
    state.page = 0;
    apply();
  }

  function apply() {
    const rows = [];
    const search = state.search.trim();
    for (let i = 0; i < n; i++) {
      if (state.filter && !state.filter.test(i)) continue;
      if (state.agent !== '' && T.agent[i] !== Number(state.agent)) continue;
      if (search !== '' && String(T.task_a[i]) !== search && String(T.task_b[i]) !== search) continue;
      rows.push(i);
    }
    if (state.col !== null) {
      const get = cols[state.col], d = state.dir;
      rows.sort((a, b) => {
        const x = get(a), y = get(b);
        if (x === null || y === null) return (x === null) - (y === null) || a - b;
        return (x < y ? -d : x > y ? d : 0) || a - b;
      });
    }
    state.rows = rows;
    draw();
  }

  function draw() {
    const table = $('task-table');
    const body = el('tbody');
    const start = state.page * PAGE;
    for (const i of state.rows.slice(start, start + PAGE)) {
      const tr = el('tr', null, 'link');
      tr.dataset.task = T.task_a[i];
      tr.appendChild(el('th', show[0](i)));
      for (let c = 1; c < show.length; c++) {
        const td = el('td', show[c](i));
        if (c === 5 && T.delta[i] !== null && T.delta[i] !== 0) td.className = T.delta[i] > 0 ? 'delta up better' : 'delta down worse';
        tr.appendChild(td);
      }
      if (hasPair.has(T.task_a[i])) tr.title = 'conversations side by side below';
      body.appendChild(tr);
    }
    table.replaceChild(body, table.tBodies[0]);
    const pages = Math.max(1, Math.ceil(state.rows.length / PAGE));
    $('task-count').textContent = state.rows.length + ' of ' + n + ' paired tasks';
    $('task-page').textContent = 'page ' + (state.page + 1) + ' of ' + pages;
    $('task-prev').disabled = state.page === 0;
    $('task-next').disabled = state.page >= pages - 1;
    const chip = $('task-chip');
    chip.textContent = '';
    if (state.filter) {
      const c = el('span', state.filter.label, 'chip');
      const x = el('button', '×');
      x.title = 'show all tasks';
      x.addEventListener('click', () => setFilter(null, null));
      c.appendChild(x);
      chip.appendChild(c);
    }
  }

  function setup() {
    const ths = $('task-table').tHead.rows[0].cells;
    for (let c = 0; c < ths.length; c++) {
      ths[c].classList.add('sortable');
      ths[c].addEventListener('click', () => {
        if (state.col === c) state.dir = -state.dir; else { state.col = c; state.dir = 1; }
        for (const th of ths) th.removeAttribute('aria-sort');
        ths[c].setAttribute('aria-sort', state.dir > 0 ? 'ascending' : 'descending');
        apply();
      });
    }
    const pager = $('task-pager');
    const prev = el('button', '‹ prev'), next = el('button', 'next ›'), label = el('span');
    prev.id = 'task-prev'; next.id = 'task-next'; label.id = 'task-page';
    prev.addEventListener('click', () => { state.page--; draw(); });
    next.addEventListener('click', () => { state.page++; draw(); });
    pager.append(prev, label, next);
    const select = $('task-agent');
    data.agents.forEach((a, i) => { const o = el('option', agentName(i)); o.value = String(i); select.appendChild(o); });
    select.addEventListener('change', () => { state.agent = select.value; state.page = 0; apply(); });
    $('task-search').addEventListener('input', (e) => { state.search = e.target.value; state.page = 0; apply(); });
    $('task-table').addEventListener('click', (e) => {
      const tr = e.target.closest('tbody tr');
      if (tr && tr.dataset.task !== undefined) location.hash = 'task=' + tr.dataset.task;
    });
    const picks = { improved: (i) => T.delta[i] > 0, regressed: (i) => T.delta[i] < 0, unchanged: (i) => T.delta[i] === 0 };
    for (const b of document.querySelectorAll('.pick')) {
      b.addEventListener('click', () => setFilter(b.dataset.pick, picks[b.dataset.pick], b));
    }
    for (const td of document.querySelectorAll('#transition-table td.cell')) {
      const ga = Number(td.dataset.ga), gb = Number(td.dataset.gb);
      td.addEventListener('click', () => setFilter(data.groups[ga] + ' → ' + data.groups[gb], (i) => T.group_a[i] === ga && T.group_b[i] === gb, td));
    }
    const plotNames = { scatter: 'scatter', cost: 'token-cost', histogram: 'delta' };
    for (const g of document.querySelectorAll('[data-plot]')) {
      const column = T[g.dataset.plot];
      g.addEventListener('click', (e) => {
        const mark = e.target.closest('.mark');
        if (!mark) return;
        const id = Number(mark.dataset.id);
        const title = mark.querySelector('title');
        setFilter(plotNames[g.dataset.plot] + ': ' + (title ? title.textContent : id), (i) => column[i] === id, mark);
        $('tasks').scrollIntoView({ block: 'start' });
      });
    }
    for (const tr of document.querySelectorAll('#agent-table tr[data-agent]')) {
      tr.addEventListener('click', () => { select.value = tr.dataset.agent; state.agent = select.value; state.page = 0; apply(); $('tasks').scrollIntoView({ block: 'start' }); });
    }
    $('task-controls').hidden = false;
    apply();
  }

  function openFromHash() {
    const m = location.hash.match(/^#task=(-?\d+)$/);
    if (!m) return;
    for (const old of document.querySelectorAll('details.pair.selected')) old.classList.remove('selected');
    const d = $('pair-' + m[1]);
    if (d) { d.open = true; d.classList.add('selected'); d.scrollIntoView({ block: 'start' }); return; }
    state.search = m[1]; $('task-search').value = m[1]; state.page = 0; apply();
  }

  setup();
  window.addEventListener('hashchange', openFromHash);
  openFromHash();
  document.documentElement.setAttribute('data-ready', '1');
});
