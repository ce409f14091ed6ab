/* Dashboard charts: horizontal bar charts drawn as SVG from the page's JSON data island
   (#dashboard-data). Each chart sits in a <figure> next to a table with the same figures; once the
   chart is drawn the table is hidden visually but stays for screen readers (the SVG is aria-hidden). */
(function () {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";
  const ROW = 26;
  const LABEL = 150;
  const VALUE = 56;

  function el(name, attrs, text) {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function format(value, kind) {
    if (value === null || value === undefined) return "–";
    return kind === "percent" ? Math.round(value * 100) + "%" : String(value);
  }

  function draw(container, rows, max, kind) {
    const width = Math.max(container.clientWidth || 600, 320);
    const barSpace = width - LABEL - VALUE;
    const svg = el("svg", { width: width, height: rows.length * ROW + 4, viewBox: `0 0 ${width} ${rows.length * ROW + 4}`, class: "chart-svg", focusable: "false" });
    rows.forEach((row, i) => {
      const y = i * ROW + 2;
      const share = row.value === null || !max ? 0 : Math.min(1, row.value / max);
      const group = el("g", { class: "chart-row" });
      group.appendChild(el("title", {}, `${row.title}: ${format(row.value, kind)}`));
      group.appendChild(el("text", { x: LABEL - 8, y: y + ROW / 2, class: "chart-label", "text-anchor": "end", "dominant-baseline": "middle" }, row.label));
      group.appendChild(el("rect", { x: LABEL, y: y + 4, width: barSpace, height: ROW - 8, rx: 4, class: "chart-track" }));
      group.appendChild(el("rect", { x: LABEL, y: y + 4, width: Math.max(share * barSpace, row.value ? 2 : 0), height: ROW - 8, rx: 4, class: "chart-bar" }));
      group.appendChild(el("text", { x: LABEL + barSpace + 8, y: y + ROW / 2, class: "chart-value", "dominant-baseline": "middle" }, format(row.value, kind)));
      svg.appendChild(group);
    });
    container.replaceChildren(svg);
  }

  function drawAll() {
    const island = document.getElementById("dashboard-data");
    if (!island) return;
    const data = JSON.parse(island.textContent);
    document.querySelectorAll("[data-chart]").forEach((container) => {
      const key = container.dataset.chart;
      const rows = data[key] || [];
      if (!rows.length) return;
      const kind = container.dataset.format || "count";
      const max = kind === "percent" ? 1 : Math.max(data[key + "_max"] || 0, ...rows.map((r) => r.value || 0));
      draw(container, rows, max, kind);
      const table = container.closest("figure").querySelector(".chart-table");
      if (table) table.classList.add("visually-hidden");
    });
  }

  let resizeTimer;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(drawAll, 150);
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", drawAll);
  else drawAll();
})();
