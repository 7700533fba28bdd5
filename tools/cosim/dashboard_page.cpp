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
canvas{display:block;background:#fff;border:1px solid #eee;margin:4px 0}
.plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(460px,1fr));gap:8px}
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
<table><thead><tr><th>driver</th><th>auth</th><th>received</th><th>sent</th><th>lost</th><th>duplicates</th><th>out of order</th><th>malformed</th><th>bad MAC</th><th>kernel drops</th><th>stale events</th></tr></thead>
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

// Envelope: the band between min and max of each update, and the limit as a dashed line.
function draw(canvas, s, limit, color) {
  const g = canvas.getContext("2d"), W = canvas.width, H = canvas.height, L = 58, P = 8;
  g.clearRect(0, 0, W, H);
  if (!s.x.length) return;
  let y0 = Infinity, y1 = -Infinity;
  for (let i = 0; i < s.x.length; i++) {
    if (s.lo[i] !== null && isFinite(s.lo[i])) y0 = Math.min(y0, s.lo[i]);
    if (s.hi[i] !== null && isFinite(s.hi[i])) y1 = Math.max(y1, s.hi[i]);
  }
  if (!isFinite(y0)) return;
  // A limit far above the data would flatten it: then it is named, not drawn.
  const hasLimit = limit !== null && limit !== undefined && isFinite(limit);
  const drawLimit = hasLimit && Math.abs(limit) <= 10 * Math.max(Math.abs(y0), Math.abs(y1));
  if (drawLimit) { y0 = Math.min(y0, limit); y1 = Math.max(y1, limit); }
  if (y1 - y0 < 1e-12 * Math.max(1, Math.abs(y0))) { y0 -= 0.5; y1 += 0.5; }
  const pad = 0.05 * (y1 - y0); y0 -= pad; y1 += pad;
  const x0 = s.x[0], x1 = s.x[s.x.length - 1] > x0 ? s.x[s.x.length - 1] : x0 + 1;
  const X = x => L + (W - L - P) * (x - x0) / (x1 - x0);
  const Y = y => P + (H - 2 * P - 14) * (1 - (y - y0) / (y1 - y0));
  g.strokeStyle = "#ccc"; g.fillStyle = "#555"; g.font = "11px sans-serif";
  g.strokeRect(L, P, W - L - P, H - 2 * P - 14);
  g.fillText(fmt(y1, 3), 2, P + 10); g.fillText(fmt(y0, 3), 2, H - 22);
  g.fillText(fmt(x0, 4), L, H - 2); g.fillText(fmt(x1, 4) + " s", W - 70, H - 2);
  g.fillStyle = color + "55"; g.strokeStyle = color; g.lineWidth = 1;
  g.beginPath();
  for (let i = 0; i < s.x.length; i++) g.lineTo(X(s.x[i]), Y(s.hi[i]));
  for (let i = s.x.length - 1; i >= 0; i--) g.lineTo(X(s.x[i]), Y(s.lo[i]));
  g.closePath(); g.fill();
  g.beginPath();
  for (let i = 0; i < s.x.length; i++) g.lineTo(X(s.x[i]), Y(s.hi[i]));
  g.stroke();
  g.beginPath();
  for (let i = 0; i < s.x.length; i++) { g.moveTo(X(s.x[i]) , Y(s.lo[i])); g.lineTo(X(s.x[i]), Y(s.hi[i])); }
  g.stroke();
  if (hasLimit && !drawLimit) {
    g.fillStyle = "#b00020"; g.fillText("limit " + fmt(limit, 3) + " off scale", W - P - 150, P + 11);
  }
  if (drawLimit) {
    g.strokeStyle = "#b00020"; g.setLineDash([5, 4]); g.beginPath();
    g.moveTo(L, Y(limit)); g.lineTo(W - P, Y(limit)); g.stroke(); g.setLineDash([]);
    g.fillStyle = "#b00020"; g.fillText("limit", W - P - 30, Y(limit) - 3);
  }
}

function plotBox(parent, id, title) {
  const d = document.createElement("div"); d.className = "plot";
  d.innerHTML = "<h3></h3><canvas width=\"460\" height=\"130\"></canvas>";
  d.firstChild.textContent = title; d.lastChild.id = id; parent.appendChild(d);
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
    const canvas = plotBox(plots, "col-" + i, c);
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
    const open = m.drivers.filter(d => d.auth === "none").map(d => d.name);
    $("unauth").hidden = open.length === 0;
    $("unauth").textContent = open.length === 0 ? "" : "UNAUTHENTICATED (auth = \"none\"): " +
      open.join(", ") + " — any host on the bench network can forge or replay these datagrams";
    m.drivers.forEach(d => {
      const tr = document.createElement("tr");
      for (const k of ["name", "auth", "received", "sent", "lost", "duplicates", "out_of_order", "malformed", "bad_mac", "kernel_drops", "stale_events"]) {
        const td = document.createElement("td"); td.textContent = d[k]; tr.appendChild(td);
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
  $("conn").textContent = "reconnected" + resumeNote;
}

function connect() {
  ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws" +
                     (lastSeq > 0 ? "?after=" + lastSeq : ""));
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
connect();
</script></body></html>
)HTML";
  return page;
}

}  // namespace cosim::cli
