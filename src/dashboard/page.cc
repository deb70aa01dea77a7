#include "dashboard/page.h"

namespace comet::dashboard {

namespace {

// Kept in one literal so the page is one response with no other request than the JSON polls.
constexpr std::string_view kPage = R"PAGE(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Comet dashboard</title>
<style>
  :root { --fg:#1d2430; --muted:#667085; --line:#d0d5dd; --bg:#f6f7f9; --card:#fff;
          --ok:#127a3a; --warn:#b54708; --bad:#b42318; --accent:#1849a9; }
  * { box-sizing: border-box; }
  body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
         color:var(--fg); background:var(--bg); }
  header { display:flex; gap:1.5em; align-items:baseline; padding:.8em 1.2em;
           background:#101828; color:#fff; position:sticky; top:0; z-index:1; }
  header h1 { font-size:1.15em; margin:0; }
  header .meta { color:#cfd4dc; font-size:.9em; }
  header .stale { color:#fda29b; font-weight:600; }
  main { padding:1em 1.2em; display:grid; gap:1.2em; }
  section > h2 { font-size:1.05em; margin:.2em 0 .6em; }
  .card { background:var(--card); border:1px solid var(--line); border-radius:6px;
          padding:.7em .9em; margin-bottom:.8em; }
  .card h3 { font-size:1em; margin:0 0 .4em; }
  .facts { color:var(--muted); font-size:.9em; margin-bottom:.5em; }
  .facts b { color:var(--fg); font-weight:600; }
  table { border-collapse:collapse; width:100%; font-size:.92em; }
  th, td { text-align:left; padding:.25em .5em; border-bottom:1px solid #eaecf0;
           vertical-align:top; }
  th { color:var(--muted); font-weight:600; }
  td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
  .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size:.95em; }
  .pill { display:inline-block; padding:0 .45em; border-radius:9px; font-size:.85em;
          font-weight:600; border:1px solid currentColor; }
  tr.member.up .state { color:var(--ok); font-weight:700; }
  tr.member.down { background:#fef3f2; }
  tr.member.down .state { color:var(--bad); font-weight:700; }
  tr.member.down td { color:var(--bad); }
  .role-MASTER { color:var(--accent); }
  .role-SLAVE { color:var(--muted); }
  .insync { color:var(--ok); }
  .notinsync { color:var(--warn); }
  .warn { color:var(--warn); }
  .err { color:var(--bad); }
  details summary { cursor:pointer; }
  .durability-panel { border-left:3px solid var(--accent); padding:.2em .6em; margin:.4em 0;
                       background:#f5f8ff; }
  .durability-panel .panel-title { font-weight:600; font-size:.9em; color:var(--accent); }
  .durability { margin:.2em 0; }
  ul.reasons { margin:.2em 0 .4em 1.2em; padding:0; color:var(--muted); }
  ol.history { margin:0; padding-left:1.4em; font-size:.92em; }
  .empty { color:var(--muted); font-style:italic; }
  label.toggle { font-weight:normal; font-size:.85em; color:var(--muted); margin-left:1em; }
</style>
</head>
<body data-seq="0">
<header>
  <h1>Comet dashboard</h1>
  <span class="meta">name servers: <span id="namesrv" class="mono">?</span></span>
  <span class="meta">last poll: <span id="updated">never</span></span>
  <span id="status" class="meta"></span>
</header>
<main>
  <section id="clusters"><h2>Clusters and broker groups</h2><div id="cluster-body" class="empty">waiting for the first poll&hellip;</div></section>
  <section id="history"><h2>Recent role and membership changes</h2><div id="history-body" class="empty">none observed yet</div></section>
  <section id="topics"><h2>Topics <label class="toggle"><input type="checkbox" id="show-system"> show system topics</label></h2><div id="topics-body" class="empty">waiting for the first poll&hellip;</div></section>
  <section id="groups"><h2>Consumer groups</h2><div id="groups-body" class="empty">waiting for the first poll&hellip;</div></section>
</main>
<script>
"use strict";
const POLL_MS = 1500;
const openKeys = new Set();  // <details data-key> the user opened, kept across redraws
let last = { cluster: null, topics: null, groups: null, history: null };

function esc(v) {
  return String(v === null || v === undefined ? "" : v)
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}
function num(v) { return v === null || v === undefined ? "-" : Number(v).toLocaleString("en-US"); }
function tps(v) { return Number(v || 0).toFixed(2); }
function when(ms) { return ms > 0 ? new Date(ms).toLocaleTimeString() : "-"; }
function details(key, summary, body) {
  const open = openKeys.has(key) ? " open" : "";
  return `<details data-key="${esc(key)}"${open}><summary>${summary}</summary>${body}</details>`;
}
document.addEventListener("toggle", (e) => {
  const d = e.target;
  if (d.tagName === "DETAILS" && d.dataset.key) {
    if (d.open) { openKeys.add(d.dataset.key); } else { openKeys.delete(d.dataset.key); }
  }
}, true);

function roleText(m) {
  let r = m.role || "?";
  if (m.dledgerRole) { r += ` (DLedger ${m.dledgerRole.toLowerCase()})`; }
  else if (m.brokerRole && m.brokerRole !== r) { r += ` (${m.brokerRole})`; }
  return m.up ? r : `${m.role || "?"} (last known)`;
}
function replicationCell(m) {
  if (m.inSync === true) { return `<span class="insync">${esc(m.replication)}</span>`; }
  if (m.inSync === false) { return `<span class="notinsync">${esc(m.replication)}</span>`; }
  return esc(m.replication);
}

function renderCluster(c) {
  document.getElementById("namesrv").textContent = (c.namesrv.addrs || []).join(";");
  const parts = [];
  if (c.namesrv.error) {
    parts.push(`<p class="err">name server: ${esc(c.namesrv.error)}</p>`);
  }
  for (const cl of c.clusters) {
    parts.push(`<h3 class="cluster" data-cluster="${esc(cl.name)}">Cluster ${esc(cl.name)}</h3>`);
    for (const g of cl.groups) {
      const facts = [
        `mode <b>${esc(g.mode)}</b>`,
        `master <b class="mono">${esc(g.masterAddr || "none answering")}</b>`,
      ];
      if (g.needAckNums !== null) { facts.push(`needAckNums <b>${g.needAckNums}</b>${g.degraded ? " <span class=warn>(degraded)</span>" : ""}`); }
      if (g.aliveReplicaNums !== null) { facts.push(`alive replicas <b>${g.aliveReplicaNums}</b>`); }
      if (g.inSyncReplicaNums !== null) { facts.push(`in-sync replicas <b>${g.inSyncReplicaNums}</b>`); }
      if (g.mode !== "dledger") { facts.push(`in-sync set <b class="mono insync-set">{${esc(g.inSyncSet.join(", "))}}</b>`); }
      if (g.syncStateSet) { facts.push(`syncStateSet <b>{${esc(g.syncStateSet)}}</b>`); }
      if (g.dledgerLeader) { facts.push(`DLedger leader <b>${esc(g.dledgerLeader)}</b>`); }
      const rows = g.members.map((m) => {
        const cls = `member ${m.up ? "up" : "down"}`;
        const reg = m.registered ? "" : ` <span class="pill warn" title="no longer listed by the name server">unregistered</span>`;
        return `<tr data-addr="${esc(m.addr)}" class="${cls}" data-role="${esc(m.role)}" data-state="${m.up ? "UP" : "DOWN"}">` +
          `<td class="num">${m.brokerId}</td><td class="mono addr">${esc(m.addr)}${reg}</td>` +
          `<td class="role role-${esc(m.role)}">${esc(roleText(m))}</td>` +
          `<td class="state" title="${esc(m.error)}">${m.up ? "UP" : "DOWN"}</td>` +
          `<td>${esc(m.version || "-")}</td>` +
          `<td class="replication">${replicationCell(m)}</td>` +
          `<td class="num">${num(m.maxOffset >= 0 ? m.maxOffset : null)}</td>` +
          `<td class="num">${tps(m.putTps)}</td><td class="num">${tps(m.getTps)}</td>` +
          `<td>${m.up ? "now" : esc(when(m.lastSeen))}</td></tr>`;
      }).join("");
      parts.push(`<div class="card group" data-broker-name="${esc(g.brokerName)}">` +
        `<h3>${esc(g.brokerName)}</h3><div class="facts">${facts.join(" &middot; ")}</div>` +
        `<table><thead><tr><th class="num">id</th><th>address</th><th>role</th><th>state</th>` +
        `<th>version</th><th>replication</th><th class="num">log end</th>` +
        `<th class="num">put TPS</th><th class="num">get TPS</th><th>last answer</th></tr></thead>` +
        `<tbody>${rows}</tbody></table></div>`);
    }
  }
  const body = document.getElementById("cluster-body");
  body.className = "";
  body.innerHTML = parts.length ? parts.join("") : `<p class="empty">no broker registered</p>`;
}

function renderHistory(h) {
  const body = document.getElementById("history-body");
  if (!h.events.length) {
    body.className = "empty";
    body.textContent = "none observed yet";
    return;
  }
  body.className = "";
  const items = h.events.map((e) => {
    const what = e.kind === "master"
      ? `master of ${esc(e.brokerName)}: ${esc(e.from)} &rarr; ${esc(e.to)}`
      : `${esc(e.brokerName)} <span class="mono">${esc(e.addr)}</span> ${esc(e.kind)}` +
        (e.from || e.to ? `: ${esc(e.from || "-")} &rarr; ${esc(e.to || "-")}` : "");
    return `<li class="change kind-${esc(e.kind)}">${esc(when(e.at))} ${what}</li>`;
  });
  const dropped = h.dropped ? `<p class="empty">${h.dropped} older change(s) dropped</p>` : "";
  body.innerHTML = `<ol class="history">${items.join("")}</ol>${dropped}`;
}

function renderTopics(t) {
  const showSystem = document.getElementById("show-system").checked;
  const shown = t.topics.filter((x) => showSystem || !x.system);
  const body = document.getElementById("topics-body");
  if (!shown.length) {
    body.className = "empty";
    body.textContent = t.topics.length ? "only system topics (tick the box to show them)" : "no topic";
    return;
  }
  body.className = "";
  const cards = shown.map((x) => {
    const routes = x.routes.map((r) => `${esc(r.brokerName)} r${r.readQueueNums}/w${r.writeQueueNums} ${esc(r.perm)}`).join(", ");
    const msgs = x.queues.reduce((s, q) => s + (q.maxOffset - q.minOffset), 0);
    const queueRows = x.queues.map((q) => `<tr><td>${esc(q.brokerName)}</td><td class="num">${q.queueId}</td>` +
      `<td class="num">${num(q.minOffset)}</td><td class="num">${num(q.maxOffset)}</td><td>${esc(when(q.lastUpdate))}</td></tr>`).join("");
    const queues = details(`q:${x.name}`, `${x.queues.length} queue(s), ${num(msgs)} message(s) held`,
      `<table><thead><tr><th>broker</th><th class="num">queue</th><th class="num">min offset</th>` +
      `<th class="num">max offset</th><th>last stored</th></tr></thead><tbody>${queueRows}</tbody></table>`);
    const dur = x.durability.map((d) => `<div class="durability" data-broker-name="${esc(d.brokerName)}">` +
      `<b>${esc(d.brokerName)}</b> <span class="mono">${esc(d.masterAddr)}</span>: <span class="contract">${esc(d.contract)}</span>` +
      d.warnings.map((w) => `<div class="warn">WARNING: ${esc(w)}</div>`).join("") +
      (d.reasons.length ? details(`d:${x.name}:${d.brokerName}`, "why",
        `<ul class="reasons">${d.reasons.map((r) => `<li>${esc(r)}</li>`).join("")}</ul>`) : "") +
      `</div>`).join("");
    const err = x.error ? `<div class="err">${esc(x.error)}</div>` : "";
    return `<div class="card topic" data-topic="${esc(x.name)}"><h3>${esc(x.name)}${x.system ? ` <span class="pill">system</span>` : ""}</h3>` +
      `<div class="facts">clusters <b>${esc(x.clusters.join(", ") || "-")}</b> &middot; routes <b>${routes || "-"}</b>` +
      ` &middot; put TPS <b>${tps(x.putTps)}</b></div>${err}` +
      `<div class="durability-panel"><div class="panel-title">Durability: what an acknowledged send has reached</div>` +
      (dur || `<p class="empty">no broker group in the route</p>`) + `</div>${queues}</div>`;
  });
  body.innerHTML = cards.join("");
}

function renderGroups(g) {
  const body = document.getElementById("groups-body");
  if (!g.groups.length) {
    body.className = "empty";
    body.textContent = "no consumer group has committed an offset";
    return;
  }
  body.className = "";
  body.innerHTML = g.groups.map((x) => {
    const rows = x.queues.map((q) => `<tr><td>${esc(q.topic)}</td><td>${esc(q.brokerName)}</td><td class="num">${q.queueId}</td>` +
      `<td class="num">${num(q.brokerOffset)}</td><td class="num">${num(q.consumerOffset)}</td>` +
      `<td class="num lag">${num(q.lag)}</td><td>${esc(when(q.lastTimestamp))}</td></tr>`).join("");
    const err = x.error ? `<div class="err">${esc(x.error)}</div>` : "";
    return `<div class="card consumer-group" data-group="${esc(x.group)}"><h3>${esc(x.group)}</h3>` +
      `<div class="facts">total lag <b class="total-lag">${num(x.totalLag)}</b> &middot; consume TPS <b>${tps(x.consumeTps)}</b></div>${err}` +
      details(`g:${x.group}`, `${x.queues.length} queue(s)`, `<table><thead><tr><th>topic</th><th>broker</th>` +
        `<th class="num">queue</th><th class="num">broker offset</th><th class="num">consumer offset</th>` +
        `<th class="num">lag</th><th>last consumed</th></tr></thead><tbody>${rows}</tbody></table>`) + `</div>`;
  }).join("");
}

async function fetchJson(path) {
  const r = await fetch(path, { cache: "no-store" });
  if (!r.ok) { throw new Error(`${path}: HTTP ${r.status}`); }
  return r.json();
}

async function poll() {
  try {
    const [c, t, g, h] = await Promise.all(
      ["/api/cluster", "/api/topics", "/api/groups", "/api/history"].map(fetchJson));
    last = { cluster: c, topics: t, groups: g, history: h };
    renderCluster(c);
    renderHistory(h);
    renderTopics(t);
    renderGroups(g);
    document.body.dataset.seq = String(c.seq);
    document.getElementById("updated").textContent = c.takenAt ? when(c.takenAt) : "pending";
    const s = document.getElementById("status");
    s.className = "meta";
    s.textContent = "";
  } catch (e) {
    const s = document.getElementById("status");
    s.className = "meta stale";
    s.textContent = `dashboard unreachable (${e.message}); showing the last data`;
  }
}

document.getElementById("show-system").addEventListener("change", () => {
  if (last.topics) { renderTopics(last.topics); }
});
poll();
setInterval(poll, POLL_MS);
</script>
</body>
</html>
)PAGE";

}  // namespace

std::string_view page_html() { return kPage; }

}  // namespace comet::dashboard
