// gymscope.Inspector's front end (anywidget). The app's own build runs in an isolated frame of
// the output cell: its wasm, its worker and its style come from the kernel as bytes (the package
// ships them; nothing is fetched), made into blob URLs here. The run is not in the model's
// state: this view asks the kernel for its files a chunk at a time (custom messages, a few in
// flight), so the kernel never holds or sends a whole file at once. The frame's
// `window.GYMSCOPE` is how the app meets its host (src/web/embed.rs): the page shown alone, the
// worker's URL, the run's files, and a callback for the brushed rollouts, which become the
// model's `selection`. Without a fixed `height` the frame grows and shrinks with its page.

// Chunks asked for at once: the kernel reads the next while one is on its way.
const IN_FLIGHT = 3;

function blobUrl(bytes, type) {
  return URL.createObjectURL(new Blob([bytes], { type }));
}

const mb = (n) => (n / 1e6).toFixed(1);

// Reads the files listed in the model (`[{name, size}]`) from the kernel, chunk by chunk, into
// `File`s; `progress(done, total)` as they come. Rejects with the kernel's message.
function readRun(model, view, progress) {
  const files = model.get("_files") || [];
  const chunk = model.get("_chunk");
  const total = files.reduce((n, f) => n + f.size, 0);
  const parts = files.map(() => []);
  const wanted = [];
  files.forEach((f, i) => {
    for (let at = 0; at < f.size; at += chunk) wanted.push([i, at]);
  });
  let done = 0;
  let next = 0;
  let open = 0;
  return new Promise((resolve, reject) => {
    const finish = (error) => {
      model.off("msg:custom", onMessage);
      if (error) reject(new Error(error));
      else resolve(files.map((f, i) => parts[i].sort((a, b) => a[0] - b[0]).map((p) => p[1])));
    };
    const ask = () => {
      while (open < IN_FLIGHT && next < wanted.length) {
        const [file, offset] = wanted[next++];
        open++;
        model.send({ kind: "read", view, file, offset });
      }
      if (open === 0) finish();
    };
    function onMessage(msg, buffers) {
      if (!msg || msg.view !== view) return;
      if (msg.kind === "error") return finish(msg.message);
      if (msg.kind !== "chunk") return;
      const data = buffers && buffers[0];
      const bytes = data ? data.byteLength : 0;
      // A Blob per chunk: the browser keeps it, not this script's heap.
      parts[msg.file].push([msg.offset, new Blob(data ? [data] : [])]);
      done += bytes;
      open--;
      progress(done, total);
      ask();
    }
    model.on("msg:custom", onMessage);
    ask();
  }).then((blobs) => files.map((f, i) => ({ name: f.name, data: new Blob(blobs[i]) })));
}

function render({ model, el }) {
  const urls = [];
  const url = (bytes, type) => {
    const u = blobUrl(bytes, type);
    urls.push(u);
    return u;
  };
  const view = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const note = document.createElement("div");
  note.className = "gymscope-loading";
  note.style.font = "13px system-ui, sans-serif";
  note.style.padding = "4px 0";
  el.appendChild(note);
  let gone = false;

  const frame = document.createElement("iframe");
  frame.className = "gymscope-inspector";
  frame.title = "gymscope inspector";
  // The border inside the width: 100% of the cell, no horizontal scrollbar.
  frame.style.cssText =
    "display:block;box-sizing:border-box;width:100%;max-width:100%;border:1px solid #d0d7de;border-radius:6px";
  let fitted = 420;
  const size = () => {
    const fixed = model.get("height");
    frame.style.height = `${fixed == null ? fitted : fixed}px`;
  };
  size();
  model.on("change:height", size);

  readRun(model, view, (done, total) => {
    note.textContent = `Reading the run from the kernel: ${mb(done)} of ${mb(total)} MB`;
  })
    .then((files) => {
      if (gone) return;
      note.remove();
      start(files);
    })
    .catch((e) => {
      note.textContent = `gymscope: ${e.message}`;
      note.style.color = "#b42318";
    });

  function start(files) {
    const appJs = url(model.get("_app_js"), "text/javascript");
    const appWasm = url(model.get("_app_wasm"), "application/wasm");
    const workerJs = url(model.get("_worker_js"), "text/javascript");
    const workerWasm = url(model.get("_worker_wasm"), "application/wasm");
    // What trunk's loader shim does, from blob URLs: the worker glue, then its wasm.
    const loader = url(
      `importScripts(${JSON.stringify(workerJs)}); wasm_bindgen({ module_or_path: ${JSON.stringify(workerWasm)} });`,
      "text/javascript",
    );
    frame.__gymscope = {
      page: model.get("page"),
      workerUrl: loader,
      files,
      onSelection(keys) {
        model.set("selection", Array.from(keys, (k) => [k[0], k[1]]));
        model.save_changes();
      },
      onSize(height) {
        fitted = Math.max(80, Math.ceil(height) + 2);
        size();
      },
    };
    // `</style` cannot occur in the app's own style; escaped anyway, as text in a style element.
    const css = String(model.get("_app_css") || "").replace(/<\/style/gi, "<\\/style");
    frame.srcdoc = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>gymscope</title>
<style>${css}</style></head><body><script type="module">
// Made in this frame's realm: the app checks its values' types against this window's.
const host = window.frameElement.__gymscope;
window.GYMSCOPE = {
  page: host.page,
  workerUrl: host.workerUrl,
  files: host.files.map((f) => new File([f.data], f.name)),
  onSelection: (keys) => host.onSelection(keys),
};
// The page's own height (the html element's box, not the frame's), for the host to fit.
new ResizeObserver(() => host.onSize(document.documentElement.getBoundingClientRect().height))
  .observe(document.documentElement);
const app = await import(${JSON.stringify(appJs)});
await app.default({ module_or_path: ${JSON.stringify(appWasm)} });
</script></body></html>`;
    el.appendChild(frame);
  }
  return () => {
    gone = true;
    model.off("change:height", size);
    for (const u of urls) URL.revokeObjectURL(u);
  };
}

export default { render };
