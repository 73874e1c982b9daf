// node chromium.mjs WASM FILE [MB]: bench.mjs's modes in headless Chromium, in a dedicated Web Worker
// (as the app's parse runs). A server on 127.0.0.1:8097 streams the wasm and the first MB MB of FILE
// (nothing copied on disk); the worker cuts them at the last newline.
import http from 'node:http';
import fs from 'node:fs';
import { createRequire } from 'node:module';
// playwright-core from PLAYWRIGHT_DIR (a folder where `npm install playwright-core` ran).
const require = createRequire((process.env.PLAYWRIGHT_DIR ?? process.cwd()) + '/');
const { chromium } = require('playwright-core');
const [wasmPath, file, mbArg] = process.argv.slice(2);
const want = Number(mbArg ?? 200) * 1e6;
const workerJs = `
const names = ['a newlines (memchr)', 'b + utf8 per line', 'c b + skim::value_end',
  "c' c + has_control_bytes", 'd profile::parse_line', 'e joint_read::rollout_line',
  'f worker pipeline (joint)', 'g worker pipeline (profile)'];
onmessage = async () => {
  const module = await WebAssembly.compileStreaming(fetch('/wasm'));
  const imports = {};
  for (const { module: m, name } of WebAssembly.Module.imports(module)) {
    (imports[m] ??= {})[name] = () => { throw new Error('import ' + m + '.' + name + ' called'); };
  }
  const x = (await WebAssembly.instantiate(module, imports)).exports;
  const data = new Uint8Array(await (await fetch('/data')).arrayBuffer());
  const len = data.lastIndexOf(10) + 1;
  const ptr = x.alloc(len);
  new Uint8Array(x.memory.buffer, ptr, len).set(data.subarray(0, len));
  const mb = len / 1e6;
  postMessage('wasm in Chromium ' + navigator.userAgent.match(/Chrome\\/[\\d.]+/)[0] + ' worker: ' + mb.toFixed(1) + ' MB of complete lines');
  for (let mode = 0; mode < names.length; mode++) {
    let best = Infinity, ok = 0;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      ok = x.run(ptr, len, mode) >>> 0;
      best = Math.min(best, performance.now() - t);
    }
    postMessage(names[mode].padEnd(28) + ' best ' + best.toFixed(1).padStart(7) + ' ms  ' + (mb / (best / 1e3)).toFixed(0).padStart(7) + ' MB/s  ok ' + ok + ' fails ' + x.fails());
  }
  postMessage('done');
};`;
const server = http.createServer((req, res) => {
  if (req.url === '/wasm') { res.writeHead(200, { 'content-type': 'application/wasm' }); fs.createReadStream(wasmPath).pipe(res); }
  else if (req.url === '/data') { res.writeHead(200, { 'content-type': 'application/octet-stream' }); fs.createReadStream(file, { end: want - 1 }).pipe(res); }
  else if (req.url === '/worker.js') { res.writeHead(200, { 'content-type': 'text/javascript' }); res.end(workerJs); }
  else { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<!doctype html><title>wasmfloor</title>'); }
});
await new Promise(r => server.listen(8097, '127.0.0.1', r));
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage();
  await page.goto('http://127.0.0.1:8097/');
  const lines = await page.evaluate(() => new Promise((resolve, reject) => {
    const out = [];
    const w = new Worker('/worker.js');
    w.onerror = e => reject(new Error(e.message));
    w.onmessage = e => { if (e.data === 'done') resolve(out); else { out.push(e.data); } };
    w.postMessage('go');
  }));
  console.log(lines.join('\n'));
} finally {
  await browser.close();
  server.close();
}
