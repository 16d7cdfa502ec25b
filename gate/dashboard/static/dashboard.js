// Charts of the dashboard. Each reads the JSON endpoint its page names, so a chart shows what the API returns.
"use strict";

async function fetchJSON(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

const LAYOUT = { margin: { l: 70, r: 20, t: 20, b: 70 }, hovermode: "closest" };
const CONFIG = { displaylogo: false, responsive: true };

async function historyChart(element, url) {
  const h = await fetchJSON(url);
  const x = h.points.map((p, i) => i);
  const commits = h.points.map((p) => p.commit.slice(0, 8));
  const trace = {
    x, y: h.points.map((p) => p.value), mode: "lines+markers", name: h.metric,
    text: h.points.map((p) => `${p.commit.slice(0, 12)}<br>[${p.low.toPrecision(4)}, ${p.high.toPrecision(4)}]`),
    hovertemplate: "%{y:.4g}<br>%{text}<extra></extra>",
    error_y: { type: "data", symmetric: false,
      array: h.points.map((p) => p.high - p.value), arrayminus: h.points.map((p) => p.value - p.low) },
    marker: { color: "#0072B2" }, line: { color: "#0072B2" },
  };
  const shapes = h.change_points.map((c) => ({
    type: "line", x0: c.index - 0.5, x1: c.index - 0.5, yref: "paper", y0: 0, y1: 1,
    line: { color: "#D55E00", width: 2, dash: "dash" },
  }));
  const annotations = h.change_points.map((c) => ({
    x: c.index - 0.5, yref: "paper", y: 1, yanchor: "bottom", showarrow: false,
    text: `${c.change > 0 ? "+" : ""}${(c.change * 100).toFixed(1)}% at ${c.commit.slice(0, 8)}`, font: { color: "#D55E00" },
  }));
  const layout = { ...LAYOUT, shapes, annotations,
    xaxis: { tickmode: "array", tickvals: x, ticktext: commits, tickangle: -60, nticks: 30, title: "commit (oldest first)" },
    yaxis: { title: h.metric === "paired" ? `${h.impl} / handwritten` : "seconds per call" } };
  await Plotly.newPlot(element, [trace], layout, CONFIG);
  listChangePoints(document.getElementById("change-points"), h);
  element.dataset.ready = "1";
}

function listChangePoints(list, h) {
  list.replaceChildren(...(h.change_points.length ? h.change_points.map((c) => {
    const item = document.createElement("li");
    item.dataset.changePoint = c.commit;
    const code = document.createElement("code");
    code.textContent = c.commit.slice(0, 12);
    const sign = c.change > 0 ? "+" : "";
    item.append("at ", code, ` (point ${c.index + 1} of ${h.points.length}): ${c.before.toPrecision(4)} → `
      + `${c.after.toPrecision(4)} (${sign}${(c.change * 100).toFixed(1)}%)`);
    return item;
  }) : [Object.assign(document.createElement("li"), { textContent: "none detected" })]));
}

async function compareChart(element, url) {
  const c = await fetchJSON(url);
  const rows = c.machines.filter((r) => r.point);
  const trace = {
    type: "bar", x: rows.map((r) => r.machine), y: rows.map((r) => r.point.value), marker: { color: "#0072B2" },
    error_y: { type: "data", symmetric: false,
      array: rows.map((r) => r.point.high - r.point.value), arrayminus: rows.map((r) => r.point.value - r.point.low) },
    hovertemplate: "%{x}: %{y:.4g}<extra></extra>",
  };
  const layout = { ...LAYOUT, yaxis: { title: c.metric === "paired" ? `${c.impl} / handwritten` : "seconds per call" } };
  await Plotly.newPlot(element, [trace], layout, CONFIG);
  element.dataset.ready = "1";
}

async function threadsChart(element, url) {
  const c = await fetchJSON(url);
  const colours = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"];
  const traces = c.lines.map((line, i) => ({
    x: line.points.map((p) => p.threads), y: line.points.map((p) => p.throughput),
    mode: "lines+markers", name: line.impl, marker: { color: colours[i % colours.length] },
    line: { color: colours[i % colours.length] },
    error_y: { type: "data", symmetric: false,
      array: line.points.map((p) => c.num_envs / p.low - p.throughput),
      arrayminus: line.points.map((p) => p.throughput - c.num_envs / p.high) },
    hovertemplate: `${line.impl}: %{y:.4g} env updates/s at %{x} threads<extra></extra>`,
  }));
  const layout = { ...LAYOUT, hovermode: "x unified",
    xaxis: { type: "log", title: "threads", tickvals: [...new Set(c.lines.flatMap((l) => l.points.map((p) => p.threads)))] },
    yaxis: { title: "env updates per second" } };
  await Plotly.newPlot(element, traces, layout, CONFIG);
  element.dataset.ready = "1";
}

// Charts start from here, not from inline scripts: the pages' content security policy allows same-origin
// scripts only. A page's chart element says which chart it is; its data link says where the data is.
document.addEventListener("DOMContentLoaded", () => {
  const element = document.getElementById("chart");
  const link = document.getElementById("data-url");
  if (!element || !link) return;
  const charts = { history: historyChart, compare: compareChart, threads: threadsChart };
  const chart = charts[element.dataset.chart];
  if (chart) chart(element, link.href);
});
