// The live dashboard's page (docs/dashboard.md): HTML, CSS and JavaScript written here, no
// external resource, served by dashboard.cpp at "/". It opens a WebSocket to "/ws" on the
// same origin and draws each message's min/max envelopes on canvases.
#include "dashboard.hpp"

namespace cosim::cli {

const std::string& dashboard_page() {
  static const std::string page = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<link rel="icon" href="data:,">
<title>cosim live</title>
<style>
body{font:14px system-ui,sans-serif;margin:16px;background:#fafafa;color:#222}
h1{font-size:20px;margin:0 0 8px}
.bar{display:flex;flex-wrap:wrap;gap:18px;align-items:baseline;margin:6px 0}
.k{color:#666}.v{font-weight:600;font-variant-numeric:tabular-nums}
.ok{color:#17672c}.bad{color:#b00020}
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 12px;margin:10px 0}
h2{font-size:15px;margin:2px 0 6px}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #eee}
th:first-child,td:first-child{text-align:left}
canvas{display:block;width:100%;background:#fff;border:1px solid #eee;margin:4px 0;cursor:crosshair}
.plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(460px,1fr));gap:8px}
#zoom{color:#1f63b4}
.plot h3{font-size:13px;margin:2px 0;font-weight:600}
#columns label{margin-right:12px;white-space:nowrap}
#stop{background:#b00020;color:#fff;border:0;border-radius:4px;padding:6px 14px;font-weight:600}
#stop:disabled{background:#999}
</style></head><body>
<h1>cosim live: <span id="scenario">…</span> <span class="k" id="mode"></span></h1>
<div class="bar">
 <span><span class="k">status</span> <span class="v" id="status">connecting</span></span>
 <span><span class="k">stop reason</span> <span class="v" id="stop-reason">–</span></span>
 <span><span class="k">sim time</span> <span class="v" id="sim-time">–</span> s</span>
 <span><span class="k">wall time</span> <span class="v" id="wall-time">–</span> s</span>
 <span><span class="k">sim/wall</span> <span class="v" id="rtf">–</span></span>
 <span><span class="k">end &Sigma;|&delta;E|</span> <span class="v" id="end-energy">–</span> J</span>
 <span><span class="k">end max |&delta;P|</span> <span class="v" id="end-power">–</span> W</span>
 <span><span class="k">rows</span> <span class="v" id="rows">0</span></span>
 <span><span class="k">updates</span> <span class="v" id="updates">0</span></span>
 <span class="bad" id="missed" hidden></span>
 <span class="k" id="conn">not connected</span>
</div>
<div class="bar k">Plots: drag across a plot to zoom every plot to that time span, double-click to
 follow the run again; the cursor reads min and max at its time. <span id="zoom"></span></div>
<div class="bar" id="message"></div>
<div class="bar">
 <label>stop token <input id="token" size="34" autocomplete="off" spellcheck="false"></label>
 <button id="stop">Stop run</button> <span id="stop-result"></span>
</div>
<section id="alarms-section" hidden><h2>Alarms (value against the limits over each update; rate and debounce are judged by the run at every macro step)</h2>
<table><thead><tr><th>alarm</th><th>variable</th><th>min</th><th>max</th><th>rate max [/s]</th><th>debounce [s]</th><th>action</th><th>value</th><th>state</th><th>fired</th></tr></thead>
<tbody id="alarms"></tbody></table></section>
<section><h2>Energy residual</h2>
<div class="bar">
 <span><span class="k">&Sigma;|&delta;E|</span> <span class="v" id="energy">–</span> J
  <span class="k">limit</span> <span class="v" id="energy-limit">–</span></span>
 <span><span class="k">|&delta;P|</span> <span class="v" id="power">–</span> W
  <span class="k">limit</span> <span class="v" id="power-limit">–</span></span>
</div>
<div class="plots">
 <div class="plot"><h3>&Sigma;|&delta;E| [J]</h3><canvas id="plot-energy" width="460" height="150"></canvas></div>
 <div class="plot"><h3>|&delta;P| [W]</h3><canvas id="plot-power" width="460" height="150"></canvas></div>
</div></section>
<section id="timing"><h2>Threads (per update interval: largest wake-up latency and step time, smallest slack)</h2>
<table><thead><tr><th>thread</th><th>steps</th><th>wake-up max [&micro;s]</th><th>exec max [&micro;s]</th><th>slack min [&micro;s]</th><th>overruns</th></tr></thead>
<tbody id="threads"><tr><td colspan="6" class="k">offline run or not started: no threads</td></tr></tbody></table>
<div class="plots" id="thread-plots"></div></section>
<section id="drivers-section" hidden><h2>Drivers</h2>
<p id="unauth" class="bad" hidden></p>
<table><thead><tr id="driver-keys"></tr></thead>
<tbody id="drivers"></tbody></table></section>
<section><h2>Columns (min/max over each update, so no spike is lost)</h2>
<div id="columns"></div><div class="plots" id="plots"></div></section>
<script>
"use strict";
const N = 1500;  // points kept per plot (one per update, ~60 s at 25 Hz)
const $ = id => document.getElementById(id);
const params = new URLSearchParams(location.hash.slice(1));
if (params.get("token")) $("token").value = params.get("token");
// #cols=x1,v1 (names without commas), or #col=NAME repeated (any name, URL-encoded).
let wanted = null;
if (params.get("cols") || params.getAll("col").length)
  wanted = new Set((params.get("cols") ? params.get("cols").split(",") : []).concat(params.getAll("col")));
// series: the residual plots; colSeries[i]: column i's (by index: a column may be named
// "energy" or "power").
// alarmCol[k]: column index of alarm k's variable; colLimit[i]: the limit drawn on column i.
let alarmCol = [], colLimit = [];
// lastSeq: the last data update shown; a reconnecting page asks for the ones after it.
// nextRow: row0 the next update must have; rows skipped (a page too slow for the live
// stream, or away longer than the server's history) are counted and shown, not hidden.
let lastSeq = 0, layout = null, resumeNote = "", nextRow = null, firstRow = null, missedRows = 0;
let everConnected = false, view = null;  // view: {x0, x1} while zoomed, null: follow the run
let lastSim = 0, hello = null, series = {}, colSeries = [], threadSeries = [], updates = 0, ended = false, ws = null;

function fmt(v, d) {
  if (v === null || v === undefined || !isFinite(v)) return "–";
  const a = Math.abs(v);
  return (a !== 0 && (a < 1e-3 || a >= 1e6)) ? v.toExponential(d || 3) : v.toPrecision(d || 5);
}
function push(s, x, lo, hi) {
  s.x.push(x); s.lo.push(lo); s.hi.push(hi);
  if (s.x.length > N) { s.x.shift(); s.lo.shift(); s.hi.shift(); }
}
function newSeries() { return {x: [], lo: [], hi: []}; }

// Ticks at 1, 2 or 5 times a power of ten, about n of them over [a, b].
function ticks(a, b, n) {
  const raw = (b - a) / n, p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
  const step = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p, out = [];
  for (let v = Math.ceil(a / step) * step; v <= b + step * 1e-9; v += step)
    out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return {values: out, step: step};
}
// A tick label with as many decimals as the step needs (0.05, not 0.05000000000000001).
function tickText(v, step) {
  const a = Math.abs(step);
  if (a >= 1e5 || a < 1e-4) return v.toExponential(Math.max(0, Math.round(Math.log10(Math.abs(v) || a) - Math.log10(a))));
  return String(parseFloat(v.toFixed(Math.max(0, -Math.floor(Math.log10(a) + 1e-9)))));
}

// Envelope: the band between min and max of each update, and the limit as a dashed line;
// the x range is the zoom window or all points kept.
function draw(canvas, s, limit, color) {
  const dpr = window.devicePixelRatio || 1, W = canvas.clientWidth || 460, H = 150;
  if (canvas.width !== Math.round(W * dpr)) { canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr); canvas.style.height = H + "px"; }
  const g = canvas.getContext("2d"), L = 62, P = 8, B = 18;
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, W, H);
  canvas._map = null;
  if (!s.x.length) return;
  let i0 = 0, i1 = s.x.length - 1;
  if (view) {
    while (i0 < s.x.length && s.x[i0] < view.x0) i0++;
    while (i1 >= 0 && s.x[i1] > view.x1) i1--;
  }
  if (i0 > i1) return;
  let y0 = Infinity, y1 = -Infinity;
  for (let i = i0; i <= i1; i++) {
    if (s.lo[i] !== null && isFinite(s.lo[i])) y0 = Math.min(y0, s.lo[i]);
    if (s.hi[i] !== null && isFinite(s.hi[i])) y1 = Math.max(y1, s.hi[i]);
  }
  if (!isFinite(y0)) return;
  // A limit far above the data would flatten it: then it is named, not drawn.
  const hasLimit = limit !== null && limit !== undefined && isFinite(limit);
  const drawLimit = hasLimit && Math.abs(limit) <= 10 * Math.max(Math.abs(y0), Math.abs(y1));
  if (drawLimit) { y0 = Math.min(y0, limit); y1 = Math.max(y1, limit); }
  if (y1 - y0 < 1e-12 * Math.max(1, Math.abs(y0))) { y0 -= 0.5; y1 += 0.5; }
  // Padding never takes a quantity that cannot be negative (latency, |δP|) below zero.
  const pad = 0.05 * (y1 - y0), nonneg = y0 >= 0;
  y0 -= pad; y1 += pad;
  if (nonneg) y0 = Math.max(0, y0);
  const x0 = view ? view.x0 : s.x[0];
  const x1 = view ? view.x1 : (s.x[s.x.length - 1] > x0 ? s.x[s.x.length - 1] : x0 + 1);
  const X = x => L + (W - L - P) * (x - x0) / (x1 - x0);
  const Y = y => P + (H - P - B) * (1 - (y - y0) / (y1 - y0));
  canvas._map = {s: s, x0: x0, x1: x1, y0: y0, y1: y1, L: L, P: P, W: W, i0: i0, i1: i1};
  g.font = "11px sans-serif"; g.lineWidth = 1;
  const ty = ticks(y0, y1, 4), tx = ticks(x0, x1, Math.max(2, Math.floor((W - L) / 90)));
  g.strokeStyle = "#eee"; g.fillStyle = "#555"; g.textAlign = "right";
  for (const v of ty.values) {
    g.beginPath(); g.moveTo(L, Y(v)); g.lineTo(W - P, Y(v)); g.stroke();
    g.fillText(tickText(v, ty.step), L - 4, Y(v) + 4);
  }
  g.textAlign = "center";
  for (const v of tx.values) {
    g.beginPath(); g.moveTo(X(v), P); g.lineTo(X(v), H - B); g.stroke();
    g.fillText(tickText(v, tx.step), X(v), H - 5);
  }
  g.textAlign = "left"; g.fillText("t [s]", W - P - 26, H - B - 3);
  g.strokeStyle = "#ccc"; g.strokeRect(L, P, W - L - P, H - P - B);
  g.save(); g.beginPath(); g.rect(L, P, W - L - P, H - P - B); g.clip();
  g.fillStyle = color + "55"; g.strokeStyle = color;
  g.beginPath();
  for (let i = i0; i <= i1; i++) g.lineTo(X(s.x[i]), Y(s.hi[i]));
  for (let i = i1; i >= i0; i--) g.lineTo(X(s.x[i]), Y(s.lo[i]));
  g.closePath(); g.fill();
  g.beginPath();
  for (let i = i0; i <= i1; i++) g.lineTo(X(s.x[i]), Y(s.hi[i]));
  g.stroke();
  g.beginPath();
  for (let i = i0; i <= i1; i++) { g.moveTo(X(s.x[i]), Y(s.lo[i])); g.lineTo(X(s.x[i]), Y(s.hi[i])); }
  g.stroke();
  g.restore();
  if (hasLimit && !drawLimit) {
    g.fillStyle = "#b00020"; g.fillText("limit " + fmt(limit, 3) + " off scale", W - P - 150, P + 11);
  }
  if (drawLimit) {
    g.strokeStyle = "#b00020"; g.setLineDash([5, 4]); g.beginPath();
    g.moveTo(L, Y(limit)); g.lineTo(W - P, Y(limit)); g.stroke(); g.setLineDash([]);
    g.fillStyle = "#b00020"; g.fillText("limit", W - P - 30, Y(limit) - 3);
  }
  // Cursor: the update nearest to the pointer, its min and max.
  if (canvas._cursor !== undefined && canvas._cursor >= L) {
    const t = x0 + (canvas._cursor - L) * (x1 - x0) / (W - L - P);
    let k = i0;
    for (let i = i0; i <= i1; i++) if (Math.abs(s.x[i] - t) < Math.abs(s.x[k] - t)) k = i;
    const cx = X(s.x[k]), text = "t " + fmt(s.x[k], 6) + " s  min " + fmt(s.lo[k], 5) + "  max " + fmt(s.hi[k], 5);
    g.strokeStyle = "#333"; g.beginPath(); g.moveTo(cx, P); g.lineTo(cx, H - B); g.stroke();
    const w = g.measureText(text).width + 8, bx = Math.min(cx + 4, W - P - w);
    g.fillStyle = "rgba(255,255,255,.9)"; g.fillRect(bx, P + 2, w, 16);
    g.fillStyle = "#222"; g.fillText(text, bx + 4, P + 14);
    canvas.dataset.readout = text;
  }
  if (canvas._drag) {
    g.fillStyle = "rgba(31,99,180,.15)";
    g.fillRect(Math.min(canvas._drag.a, canvas._drag.b), P, Math.abs(canvas._drag.b - canvas._drag.a), H - P - B);
  }
}

// Pointer on a plot: readout, drag to zoom every plot, double-click to follow the run.
function attachPointer(canvas) {
  const px = e => e.clientX - canvas.getBoundingClientRect().left;
  canvas.onmousemove = e => {
    canvas._cursor = px(e);
    if (canvas._drag) canvas._drag.b = px(e);
    requestDraw();
  };
  canvas.onmouseleave = () => { delete canvas._cursor; delete canvas._drag; requestDraw(); };
  canvas.onmousedown = e => { canvas._drag = {a: px(e), b: px(e)}; };
  canvas.onmouseup = e => {
    const d = canvas._drag, m = canvas._map; delete canvas._drag;
    if (!d || !m || Math.abs(px(e) - d.a) < 5) { requestDraw(); return; }
    const t = p => m.x0 + (p - m.L) * (m.x1 - m.x0) / (m.W - m.L - m.P);
    setView({x0: t(Math.min(d.a, px(e))), x1: t(Math.max(d.a, px(e)))});
  };
  canvas.ondblclick = () => setView(null);
}
function setView(v) {
  view = v;
  $("zoom").textContent = v ? "zoomed to t = " + fmt(v.x0, 6) + " … " + fmt(v.x1, 6) + " s (double-click a plot to follow the run)" : "";
  requestDraw();
}

function plotBox(parent, id, title) {
  const d = document.createElement("div"); d.className = "plot";
  d.innerHTML = "<h3></h3><canvas width=\"460\" height=\"150\"></canvas>";
  d.firstChild.textContent = title; d.lastChild.id = id; parent.appendChild(d);
  attachPointer(d.lastChild);
  return d.lastChild;
}

function onHello(m) {
  // The same layout again (a reconnection): keep the plots, the history fills the gap.
  const key = JSON.stringify([m.mode, m.columns, m.threads, m.alarms]);
  if (key === layout) { hello = m; return; }
  layout = key;
  hello = m;
  $("scenario").textContent = m.scenario; $("mode").textContent = "(" + m.mode + ")";
  $("energy-limit").textContent = m.energy_limit_J === null ? "none" : fmt(m.energy_limit_J) + " J";
  $("power-limit").textContent = m.power_limit_W === null ? "none" : fmt(m.power_limit_W) + " W";
  const cols = $("columns"), plots = $("plots");
  cols.textContent = ""; plots.textContent = "";
  series = {energy: series.energy || newSeries(), power: series.power || newSeries()};
  colSeries = [];
  m.columns.forEach((c, i) => {
    if (i === 0) return;  // t
    const l = document.createElement("label"), b = document.createElement("input");
    b.type = "checkbox"; b.checked = !wanted || wanted.has(c); b.dataset.col = c;
    l.appendChild(b); l.appendChild(document.createTextNode(" " + c)); cols.appendChild(l);
    const unit = m.units && m.units[i] ? " [" + m.units[i] + "]" : "";
    const canvas = plotBox(plots, "col-" + i, c + unit);
    canvas.parentNode.hidden = !b.checked;
    b.onchange = () => { canvas.parentNode.hidden = !b.checked; };
    colSeries[i] = newSeries();
  });
  const ab = $("alarms");
  ab.textContent = ""; alarmCol = []; colLimit = [];
  $("alarms-section").hidden = !(m.alarms && m.alarms.length);
  (m.alarms || []).forEach((a, k) => {
    const tr = document.createElement("tr"); tr.id = "alarm-" + k;
    for (const v of [a.name, a.variable, fmt(a.min), fmt(a.max), fmt(a.rate_max), fmt(a.debounce_s), a.action, "–", "–", "–"]) {
      const td = document.createElement("td"); td.textContent = v; tr.appendChild(td);
    }
    ab.appendChild(tr);
    const i = m.columns.indexOf(a.variable);
    alarmCol[k] = i;
    if (i > 0 && colLimit[i] === undefined) colLimit[i] = a.max !== null ? a.max : a.min;
  });
  const tb = $("threads"), tp = $("thread-plots");
  if (m.threads.length) { tb.textContent = ""; tp.textContent = ""; }
  threadSeries = m.threads.map(name => {
    const tr = document.createElement("tr"); tr.id = "thread-" + name;
    tr.innerHTML = "<td></td><td class=\"steps\">0</td><td class=\"wake\">–</td><td class=\"exec\">–</td><td class=\"slack\">–</td><td class=\"overruns\">0</td>";
    tr.firstChild.textContent = name; tb.appendChild(tr);
    return {wake: newSeries(), exec: newSeries(), steps: 0,
            wakeCanvas: m.mode === "realtime" ? plotBox(tp, "wake-" + name, name + ": wake-up latency max [µs]") : null,
            execCanvas: plotBox(tp, "exec-" + name, name + ": step time max [µs]")};
  });
}

function onData(m) {
  if (m.seq !== undefined) {
    if (m.seq <= lastSeq) return;  // already shown
    lastSeq = m.seq;
  }
  updates++;
  $("updates").textContent = updates;
  $("wall-time").textContent = fmt(m.wall_s, 4);
  if (m.sim_s !== undefined) {
    $("sim-time").textContent = fmt(m.sim_s, 6);
    $("rtf").textContent = m.wall_s > 0 ? fmt(m.sim_s / m.wall_s, 3) : "–";
  }
  $("rows").textContent = (+$("rows").textContent) + m.rows;
  if (m.row0 !== undefined) {
    if (firstRow === null) firstRow = m.row0;
    if (nextRow !== null && m.row0 > nextRow) {
      missedRows += m.row0 - nextRow;
      $("missed").hidden = false;
      $("missed").textContent = missedRows + " rows not received";
    }
    nextRow = m.row0 + m.rows;
  }
  if (!hello) return;
  // Every plot on simulated time; timing without rows belongs to the newest row's time.
  if (m.sim_s !== undefined) lastSim = m.sim_s;
  const x = lastSim;
  if (m.min) {
    hello.columns.forEach((c, i) => {
      if (i === 0 || !colSeries[i]) return;
      push(colSeries[i], x, m.min[i], m.max[i]);
    });
    (hello.alarms || []).forEach((a, k) => {
      const i = alarmCol[k], tr = $("alarm-" + k);
      if (i < 0 || !tr) return;
      const beyond = (a.max !== null && m.max[i] > a.max) || (a.min !== null && m.min[i] < a.min);
      tr.children[7].textContent = fmt(m.last[i]);
      tr.children[8].textContent = beyond ? "beyond limit" : "within limits";
      tr.children[8].className = beyond ? "bad" : "ok";
    });
    const e = hello.columns.indexOf("sum_abs_dE"), p = hello.columns.indexOf("dP");
    if (e >= 0) { push(series.energy, x, m.min[e], m.max[e]); $("energy").textContent = fmt(m.max[e]); }
    if (p >= 0) {
      const lo = m.min[p], hi = m.max[p];
      const amax = Math.max(Math.abs(lo), Math.abs(hi));
      const amin = (lo <= 0 && hi >= 0) ? 0 : Math.min(Math.abs(lo), Math.abs(hi));
      push(series.power, x, amin, amax); $("power").textContent = fmt(amax);
    }
  }
  if (m.threads) m.threads.forEach((t, i) => {
    const s = threadSeries[i]; if (!s) return;
    const tr = $("thread-" + hello.threads[i]);
    s.steps += t.steps;
    tr.querySelector(".steps").textContent = s.steps;
    tr.querySelector(".overruns").textContent = t.overruns_total;
    tr.querySelector(".overruns").className = "overruns" + (t.overruns_total > 0 ? " bad" : "");
    if (t.steps > 0) {
      tr.querySelector(".wake").textContent = hello.mode === "realtime" ? fmt(t.wake_max_us, 4) : "–";
      tr.querySelector(".exec").textContent = fmt(t.exec_max_us, 4);
      tr.querySelector(".slack").textContent = t.slack_min_us !== undefined ? fmt(t.slack_min_us, 4) : "–";
      push(s.wake, x, 0, t.wake_max_us); push(s.exec, x, 0, t.exec_max_us);
    }
  });
  if (m.drivers) {
    $("drivers-section").hidden = false;
    const tb = $("drivers"); tb.textContent = "";
    // Every counter a driver reports, in its order (a later driver may add some).
    const keys = [];
    m.drivers.forEach(d => Object.keys(d).forEach(k => { if (!keys.includes(k)) keys.push(k); }));
    const head = $("driver-keys");
    if (head.dataset.keys !== keys.join()) {
      head.dataset.keys = keys.join(); head.textContent = "";
      keys.forEach(k => { const th = document.createElement("th"); th.textContent = k.replace(/_/g, " "); head.appendChild(th); });
    }
    const open = m.drivers.filter(d => d.auth === "none").map(d => d.name);
    $("unauth").hidden = open.length === 0;
    $("unauth").textContent = open.length === 0 ? "" : "UNAUTHENTICATED (auth = \"none\"): " +
      open.join(", ") + " — any host on the bench network can forge or replay these datagrams";
    m.drivers.forEach(d => {
      const tr = document.createElement("tr");
      for (const k of keys) {
        const td = document.createElement("td"); td.textContent = d[k] === undefined ? "–" : d[k]; tr.appendChild(td);
      }
      tb.appendChild(tr);
    });
  }
  if (!ended && $("status").textContent !== "running") $("status").textContent = "running";
  requestDraw();
}

let drawPending = false;
function requestDraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => {
    drawPending = false;
    if (!hello) return;
    draw($("plot-energy"), series.energy, hello.energy_limit_J, "#8a4baf");
    draw($("plot-power"), series.power, hello.power_limit_W, "#c0661b");
    hello.columns.forEach((c, i) => {
      const cv = $("col-" + i);
      if (i > 0 && cv && !cv.parentNode.hidden) draw(cv, colSeries[i], colLimit[i] === undefined ? null : colLimit[i], "#1f63b4");
    });
    threadSeries.forEach(s => {
      if (s.wakeCanvas) draw(s.wakeCanvas, s.wake, null, "#2a8a53");
      draw(s.execCanvas, s.exec, hello.mode === "realtime" ? hello.macro_step_s * 1e6 : null, "#555");
    });
  });
}

function onEnd(m) {
  ended = true;
  $("status").textContent = m.status;
  $("status").className = "v " + (m.status === "completed" ? "ok" : "bad");
  $("stop-reason").textContent = m.stop_reason;
  $("message").textContent = m.message || "";
  $("sim-time").textContent = fmt(m.sim_time_s, 6);
  $("wall-time").textContent = fmt(m.wall_time_s, 4);
  $("rtf").textContent = m.wall_time_s > 0 ? fmt(m.sim_time_s / m.wall_time_s, 3) : "–";
  $("end-energy").textContent = fmt(m.energy_residual_J, 6);  // as summary.json has them
  $("end-power").textContent = fmt(m.max_residual_power_W, 6);
  (m.alarms || []).forEach((a, k) => {
    const tr = $("alarm-" + k); if (!tr) return;
    tr.children[9].textContent = a.count + (a.count > 0 ? " (first at t = " + fmt(a.first_time_s, 6) + " s)" : "");
    tr.children[9].className = a.count > 0 ? "bad" : "ok";
  });
  $("stop").disabled = true;
}

function onResume(m) {
  if (m.after >= m.next) lastSeq = 0;  // the server has started another run
  resumeNote = m.missed > 0 ? "; " + m.missed + " updates missed (older than the server keeps)" : "";
  $("conn").textContent = (everConnected ? "reconnected" : "connected") + resumeNote;
  everConnected = true;
}

function connect() {
  // ?after=0 on the first connection too: a page opened mid-run gets the server's history
  // (the last 1500 updates) instead of starting its plots at the moment it connected.
  ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws?after=" + lastSeq);
  ws.onopen = () => { $("conn").textContent = "connected"; };
  ws.onclose = () => {
    $("conn").textContent = ended ? "run ended; server closed" : "disconnected; reconnecting";
    // A dropped page (network, server restart of the socket) comes back by itself and asks
    // for the updates it missed. A run that ended stays as it is.
    if (!ended) setTimeout(connect, 1000);
  };
  ws.onmessage = ev => {
    const m = JSON.parse(ev.data);
    if (m.type === "hello") onHello(m);
    else if (m.type === "data") onData(m);
    else if (m.type === "end") onEnd(m);
    else if (m.type === "resume") onResume(m);
    else if (m.type === "stop_accepted") { $("stop-result").textContent = "stop accepted"; $("stop-result").className = "ok"; }
    else if (m.type === "error") { $("stop-result").textContent = m.message; $("stop-result").className = "bad"; }
  };
}
$("stop").onclick = () => {
  if (!ws || ws.readyState !== 1) { $("stop-result").textContent = "not connected"; return; }
  ws.send(JSON.stringify({type: "stop", token: $("token").value.trim()}));
  $("stop-result").textContent = "stop requested…"; $("stop-result").className = "";
};
attachPointer($("plot-energy")); attachPointer($("plot-power"));
connect();
</script></body></html>
)HTML";
  return page;
}

}  // namespace cosim::cli
