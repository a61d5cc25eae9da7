/**
 * The page served at GET /: pick, drop or paste a screenshot, type a goal, and see the predicted
 * action drawn over the screenshot (tap = marker, scroll = arrow, typed text = caption, other
 * actions = a label), with the plan and the latency. A TypeScript string so it ships inside dist/
 * with no asset copying. Plain DOM, no framework; user text only ever goes through textContent.
 *
 * Element ids are a contract with tests/page.test.ts: #file #goal #history #token #predict #shot
 * #overlay #marker #caption #plan #latency #error #result.
 */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>autoui — next action</title>
<style>
  :root { font-family: system-ui, sans-serif; color: #1d2330; background: #f4f6fa; }
  body { margin: 0; padding: 16px 24px; }
  h1 { font-size: 20px; margin: 0 0 12px; }
  .row { display: flex; gap: 24px; align-items: flex-start; flex-wrap: wrap; }
  form { display: grid; gap: 8px; min-width: 320px; max-width: 420px; }
  label { font-size: 13px; color: #4a5468; }
  input[type=text], input[type=password], textarea { width: 100%; box-sizing: border-box; padding: 6px 8px; font: inherit; border: 1px solid #c5cbd8; border-radius: 6px; }
  textarea { height: 70px; font-family: ui-monospace, monospace; font-size: 12px; }
  button { padding: 8px 14px; font: inherit; border: 0; border-radius: 6px; background: #2456d6; color: white; cursor: pointer; }
  button:disabled { background: #8aa0d8; cursor: wait; }
  #drop { border: 2px dashed #9aa6bf; border-radius: 8px; padding: 10px; font-size: 13px; color: #4a5468; text-align: center; }
  #drop.over { background: #e3eafc; }
  #stage { display: inline-block; line-height: 0; background: #dde2ec; min-width: 200px; min-height: 120px; }
  /* The overlay sizes to the image, not the stage: a screenshot narrower than the stage's minimum would otherwise be drawn over a wider box. */
  #frame { position: relative; display: inline-block; }
  #shot { max-width: min(60vw, 540px); max-height: 82vh; display: block; }
  #overlay { position: absolute; left: 0; top: 0; width: 100%; height: 100%; pointer-events: none; overflow: visible; }
  .marker { fill: rgba(230, 40, 40, 0.35); stroke: #e62828; }
  .arrow { stroke: #e62828; fill: none; }
  .dot { fill: #e62828; }
  .label { fill: #fff; paint-order: stroke; stroke: #b01c1c; font-weight: 600; }
  #error { color: #b01c1c; white-space: pre-wrap; font-size: 14px; }
  #result { font-size: 12px; background: #fff; border: 1px solid #dde2ec; border-radius: 6px; padding: 8px; max-width: 420px; overflow: auto; max-height: 300px; }
  .facts { font-size: 14px; }
  .facts b { font-weight: 600; }
</style>
</head>
<body>
<h1>autoui — predict the next UI action</h1>
<div class="row">
  <form id="form" autocomplete="off">
    <label for="file">Screenshot (PNG, JPEG or WebP) — choose, drop, or paste with Ctrl+V</label>
    <input id="file" type="file" accept="image/png,image/jpeg,image/webp">
    <div id="drop">drop a screenshot here</div>
    <label for="goal">Goal</label>
    <input id="goal" type="text" placeholder="e.g. open the settings app">
    <label for="history">Previous actions (optional JSON list, oldest first)</label>
    <textarea id="history" placeholder='[{"action_type": "DUAL_POINT", "touch_point": [0.5, 0.5], "lift_point": [0.5, 0.5]}]'></textarea>
    <label for="token">Token (only if the server was started with --token)</label>
    <input id="token" type="password">
    <button id="predict" type="submit">Predict</button>
    <div class="facts">Action: <b id="action">—</b></div>
    <div class="facts">Plan: <b id="plan">—</b></div>
    <div class="facts">Latency: <b id="latency">—</b></div>
    <div id="error" role="alert"></div>
    <pre id="result"></pre>
  </form>
  <div id="stage"><div id="frame">
    <img id="shot" alt="screenshot">
    <svg id="overlay" xmlns="http://www.w3.org/2000/svg" preserveAspectRatio="none"></svg>
  </div></div>
</div>
<script>
(() => {
  const $ = (id) => document.getElementById(id);
  const SVG = 'http://www.w3.org/2000/svg';
  let dataUrl = null;
  let size = null;

  function setImage(file) {
    if (!file) return;
    const reader = new FileReader();
    reader.onload = () => {
      dataUrl = String(reader.result);
      $('shot').onload = () => {
        size = { width: $('shot').naturalWidth, height: $('shot').naturalHeight };
        $('overlay').setAttribute('viewBox', '0 0 ' + size.width + ' ' + size.height);
        clearOverlay();
      };
      $('shot').src = dataUrl;
    };
    reader.readAsDataURL(file);
  }

  function clearOverlay() {
    const o = $('overlay');
    while (o.firstChild) o.removeChild(o.firstChild);
  }

  function el(name, attrs, text) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    $('overlay').appendChild(e);
    return e;
  }

  function label(text, y, id) {
    const fs = Math.max(12, Math.round(size.height * 0.035));
    return el('text', { id: id || 'caption', class: 'label', x: size.width / 2, y, 'text-anchor': 'middle', 'font-size': fs, 'stroke-width': fs / 6 }, text);
  }

  function draw(res) {
    clearOverlay();
    if (!res.action || !size) return;
    const a = res.action;
    const unit = Math.min(size.width, size.height);
    const defs = el('defs', {});
    const m = document.createElementNS(SVG, 'marker');
    for (const [k, v] of Object.entries({ id: 'head', viewBox: '0 0 10 10', refX: 8, refY: 5, markerWidth: 5, markerHeight: 5, orient: 'auto-start-reverse' })) m.setAttribute(k, String(v));
    const p = document.createElementNS(SVG, 'path');
    p.setAttribute('d', 'M 0 0 L 10 5 L 0 10 z');
    p.setAttribute('fill', '#e62828');
    m.appendChild(p);
    defs.appendChild(m);
    if (a.gesture === 'tap') {
      const t = res.pixels.touch;
      el('circle', { id: 'marker', class: 'marker', cx: t.x, cy: t.y, r: unit * 0.04, 'stroke-width': unit * 0.008, 'data-x': t.x, 'data-y': t.y });
      el('circle', { class: 'dot', cx: t.x, cy: t.y, r: unit * 0.006 });
    } else if (a.gesture === 'scroll') {
      const t = res.pixels.touch, l = res.pixels.lift;
      el('line', { id: 'marker', class: 'arrow', x1: t.x, y1: t.y, x2: l.x, y2: l.y, 'stroke-width': unit * 0.02, 'marker-end': 'url(#head)', 'data-x': t.x, 'data-y': t.y });
      label('scroll ' + a.scroll_direction, Math.min(size.height - 8, Math.max(t.y, l.y) + unit * 0.08));
    } else if (a.gesture === 'type') {
      label('type: \\u201c' + a.typed_text + '\\u201d', size.height * 0.92);
    } else {
      label(a.action_type, size.height * 0.08);
    }
  }

  function show(res, ms) {
    $('result').textContent = JSON.stringify(res, null, 2);
    if (res.error) {
      $('error').textContent = res.error.code + ': ' + res.error.message;
      return;
    }
    const a = res.action;
    $('action').textContent = a ? a.action_type + (a.gesture === 'tap' ? ' (tap)' : a.gesture === 'scroll' ? ' (scroll ' + a.scroll_direction + ')' : '') : 'invalid: ' + res.invalid;
    $('plan').textContent = res.plan ? res.plan.join(' \\u2192 ') : '—';
    $('latency').textContent = res.latency_ms + ' ms on the server, ' + Math.round(ms) + ' ms round trip';
    draw(res);
  }

  async function predict(ev) {
    ev.preventDefault();
    $('error').textContent = '';
    if (!dataUrl) { $('error').textContent = 'choose, drop or paste a screenshot first'; return; }
    const body = { goal: $('goal').value, image_url: dataUrl };
    const h = $('history').value.trim();
    if (h) {
      try { body.history = JSON.parse(h); } catch (e) { $('error').textContent = 'previous actions: not valid JSON (' + e.message + ')'; return; }
    }
    const headers = { 'Content-Type': 'application/json' };
    if ($('token').value) headers.Authorization = 'Bearer ' + $('token').value;
    $('predict').disabled = true;
    const t0 = performance.now();
    try {
      const r = await fetch('/v1/predict', { method: 'POST', headers, body: JSON.stringify(body) });
      const res = await r.json();
      show(res, performance.now() - t0);
    } catch (e) {
      $('error').textContent = 'request failed: ' + e.message;
    } finally {
      $('predict').disabled = false;
    }
  }

  $('file').addEventListener('change', () => setImage($('file').files[0]));
  $('form').addEventListener('submit', predict);
  document.addEventListener('paste', (ev) => {
    for (const item of ev.clipboardData ? ev.clipboardData.items : []) {
      if (item.kind === 'file' && item.type.startsWith('image/')) { setImage(item.getAsFile()); ev.preventDefault(); return; }
    }
  });
  const drop = $('drop');
  drop.addEventListener('dragover', (ev) => { ev.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => { ev.preventDefault(); drop.classList.remove('over'); setImage(ev.dataTransfer.files[0]); });
})();
</script>
</body>
</html>
`;
