// node bench.mjs WASM FILE [MB]: copies the first ~MB MB of complete lines of FILE into wasm memory
// (read straight into it: no copy on disk) and times each mode, best of 3.
import fs from 'node:fs';
const [wasmPath, file, mbArg] = process.argv.slice(2);
const want = Number(mbArg ?? 200) * 1e6;
const names = ['a newlines (memchr)', 'b + utf8 per line', 'c b + skim::value_end',
  "c' c + has_control_bytes", 'd profile::parse_line', 'e joint_read::rollout_line',
  'f worker pipeline (joint)', 'g worker pipeline (profile)'];
// gymscope's lib links wasm-bindgen's web glue: its imports get stubs that throw if ever called
// (the measured paths call none of them).
const module = await WebAssembly.compile(fs.readFileSync(wasmPath));
const imports = {};
for (const { module: m, name } of WebAssembly.Module.imports(module)) {
  (imports[m] ??= {})[name] = () => { throw new Error(`import ${m}.${name} called`); };
}
const instance = await WebAssembly.instantiate(module, imports);
const x = instance.exports;
const ptr = x.alloc(want);
const fd = fs.openSync(file, 'r');
let got = 0;
while (got < want) {
  const view = new Uint8Array(x.memory.buffer, ptr + got, want - got);
  const n = fs.readSync(fd, view, 0, view.length, got);
  if (n === 0) break;
  got += n;
}
fs.closeSync(fd);
const mem = new Uint8Array(x.memory.buffer, ptr, got);
const len = mem.lastIndexOf(10) + 1;
const mb = len / 1e6;
console.log(`wasm (node ${process.version}, V8 ${process.versions.v8}): ${mb.toFixed(1)} MB of complete lines`);
for (let mode = 0; mode < names.length; mode++) {
  let best = Infinity, ok = 0;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    ok = x.run(ptr, len, mode) >>> 0;
    best = Math.min(best, performance.now() - t);
  }
  console.log(`${names[mode].padEnd(28)} best ${best.toFixed(1).padStart(7)} ms  ${(mb / (best / 1e3)).toFixed(0).padStart(7)} MB/s  ok ${ok} fails ${x.fails()}`);
}
