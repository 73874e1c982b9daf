// gymscope.Inspector's front end (anywidget). The app's own build runs in an isolated frame of
// the output cell: its wasm, its worker and its style come from the kernel as bytes (the package
// ships them; nothing is fetched), made into blob URLs here. The frame's `window.GYMSCOPE` is
// how the app meets its host (src/web/embed.rs): the worker's URL, the run's files, and a
// callback for the brushed rollouts, which become the model's `selection`.

function blobUrl(bytes, type) {
  return URL.createObjectURL(new Blob([bytes], { type }));
}

function render({ model, el }) {
  const urls = [];
  const url = (bytes, type) => {
    const u = blobUrl(bytes, type);
    urls.push(u);
    return u;
  };
  const appJs = url(model.get("_app_js"), "text/javascript");
  const appWasm = url(model.get("_app_wasm"), "application/wasm");
  const workerJs = url(model.get("_worker_js"), "text/javascript");
  const workerWasm = url(model.get("_worker_wasm"), "application/wasm");
  // What trunk's loader shim does, from blob URLs: the worker glue, then its wasm.
  const loader = url(
    `importScripts(${JSON.stringify(workerJs)}); wasm_bindgen({ module_or_path: ${JSON.stringify(workerWasm)} });`,
    "text/javascript",
  );
  const files = (model.get("_files") || []).map((f) => ({ name: f.name, data: f.data }));

  const frame = document.createElement("iframe");
  frame.className = "gymscope-inspector";
  frame.title = "gymscope inspector";
  frame.style.width = "100%";
  frame.style.border = "1px solid #d0d7de";
  frame.style.borderRadius = "6px";
  const size = () => (frame.style.height = `${model.get("height")}px`);
  size();
  model.on("change:height", size);
  frame.__gymscope = {
    workerUrl: loader,
    files,
    onSelection(keys) {
      model.set("selection", Array.from(keys, (k) => [k[0], k[1]]));
      model.save_changes();
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
  workerUrl: host.workerUrl,
  files: host.files.map((f) => new File([f.data], f.name)),
  onSelection: (keys) => host.onSelection(keys),
};
const app = await import(${JSON.stringify(appJs)});
await app.default({ module_or_path: ${JSON.stringify(appWasm)} });
</script></body></html>`;
  el.appendChild(frame);
  return () => {
    model.off("change:height", size);
    for (const u of urls) URL.revokeObjectURL(u);
  };
}

export default { render };
