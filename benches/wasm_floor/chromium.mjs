// node chromium.mjs WASM FILE [MB] [WORKERS]: WORKERS (default 2) dedicated workers in headless Chromium, each
// with its own wasm instance and its own half (cut at a newline) of the first MB MB of FILE, run each
// mode at the same time; the page times the wall clock until all are done (best of 3) = aggregate MB/s.
import http from 'node:http';
import fs from 'node:fs';
import { createRequire } from 'node:module';
// playwright-core from PLAYWRIGHT_DIR (a folder where `npm install playwright-core` ran).
const require = createRequire((process.env.PLAYWRIGHT_DIR ?? process.cwd()) + '/');
const { chromium } = require('playwright-core');
const [wasmPath, file, mbArg, nArg] = process.argv.slice(2);
const want = Number(mbArg ?? 200) * 1e6;
const nWorkers = Number(nArg ?? 2);
const workerJs = `
let x, ptr, len;
onmessage = async (e) => {
  if (e.data.init) {
    const [from, to] = e.data.init;
    const module = await WebAssembly.compileStreaming(fetch('/wasm'));
    const imports = {};
    for (const { module: m, name } of WebAssembly.Module.imports(module)) {
      (imports[m] ??= {})[name] = () => { throw new Error('import ' + m + '.' + name + ' called'); };
    }
    x = (await WebAssembly.instantiate(module, imports)).exports;
    const data = new Uint8Array(await (await fetch('/data?' + from + '-' + to)).arrayBuffer());
    len = data.length;
    ptr = x.alloc(len);
    new Uint8Array(x.memory.buffer, ptr, len).set(data);
    postMessage({ ready: len });
  } else {
    const t = performance.now();
    const ok = x.run(ptr, len, e.data.mode) >>> 0;
    postMessage({ ok, fails: x.fails(), ms: performance.now() - t });
  }
};`;
// Byte ranges of whole lines: the first `want` bytes cut at a newline, split at newlines.
const fd = fs.openSync(file, 'r');
const head = Buffer.alloc(want);
const got = fs.readSync(fd, head, 0, want, 0);
fs.closeSync(fd);
const total = head.subarray(0, got).lastIndexOf(10) + 1;
const cuts = [0];
for (let i = 1; i < nWorkers; i++) cuts.push(head.indexOf(10, Math.floor(total * i / nWorkers)) + 1);
cuts.push(total);
const server = http.createServer((req, res) => {
  const [path, q] = req.url.split('?');
  if (path === '/wasm') { res.writeHead(200, { 'content-type': 'application/wasm' }); fs.createReadStream(wasmPath).pipe(res); }
  else if (path === '/data') { const [a, b] = q.split('-').map(Number); res.writeHead(200); res.end(head.subarray(a, b)); }
  else if (path === '/worker.js') { res.writeHead(200, { 'content-type': 'text/javascript' }); res.end(workerJs); }
  else { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<!doctype html><title>wasmfloor</title>'); }
});
await new Promise(r => server.listen(8097, '127.0.0.1', r));
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage();
  await page.goto('http://127.0.0.1:8097/');
  const lines = await page.evaluate(async ([cuts, total]) => {
    const names = ['a newlines (memchr)', 'b + utf8 per line', 'c b + skim::value_end',
      "c' c + has_control_bytes", 'd profile::parse_line', 'e joint_read::rollout_line',
      'f worker pipeline (joint)', 'g worker pipeline (profile)'];
    const workers = cuts.slice(1).map(() => new Worker('/worker.js'));
    const ask = (w, msg) => new Promise((res, rej) => { w.onmessage = e => res(e.data); w.onerror = e => rej(new Error(e.message)); w.postMessage(msg); });
    await Promise.all(workers.map((w, i) => ask(w, { init: [cuts[i], cuts[i + 1]] })));
    const mb = total / 1e6;
    const out = [`${workers.length} workers at once, Chrome ${navigator.userAgent.match(/Chrome\/([\d.]+)/)[1]}: ${mb.toFixed(1)} MB in all`];
    for (let mode = 0; mode < names.length; mode++) {
      let best = Infinity, per = [], ok = 0, fails = 0;
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        const r = await Promise.all(workers.map(w => ask(w, { mode })));
        const wall = performance.now() - t;
        if (wall < best) { best = wall; per = r.map(x => x.ms.toFixed(0)); ok = r.reduce((s, x) => s + x.ok, 0); fails = r.reduce((s, x) => s + x.fails, 0); }
      }
      out.push(`${names[mode].padEnd(28)} wall ${best.toFixed(1).padStart(7)} ms  ${(mb / (best / 1e3)).toFixed(0).padStart(7)} MB/s  (per worker ms ${per.join('/')})  ok ${ok} fails ${fails}`);
    }
    return out;
  }, [cuts, total]);
  console.log(lines.join('\n'));
} finally {
  await browser.close();
  server.close();
}
