// Charts of the post-match report and the season dashboard, drawn with the vendored Chart.js.
// Each <canvas data-chart="ID"> reads its series from the JSON script tag #ID, which the server
// wrote (reports/views.py): no inline script, so the page keeps its Content Security Policy.
(function () {
  "use strict";

  // Vertical lines at the timeline's marks (kick-off, half time, full time), with their names.
  const marksPlugin = {
    id: "sgMarks",
    afterDatasetsDraw(chart, _args, options) {
      const marks = options.marks || [];
      const { ctx, chartArea, scales } = chart;
      ctx.save();
      ctx.strokeStyle = "#D55E00";
      ctx.fillStyle = "#D55E00";
      ctx.setLineDash([4, 2]);
      ctx.font = "11px sans-serif";
      for (const mark of marks) {
        const x = scales.x.getPixelForValue(mark.index) - scales.x.width / chart.data.labels.length / 2;
        ctx.beginPath();
        ctx.moveTo(x, chartArea.top);
        ctx.lineTo(x, chartArea.bottom);
        ctx.stroke();
        ctx.fillText(mark.label, x + 3, chartArea.top + 11);
      }
      ctx.restore();
    },
  };

  function config(spec) {
    const common = { responsive: true, maintainAspectRatio: false, animation: false };
    if (spec.kind === "timeline") {
      return {
        type: "bar",
        data: {
          labels: spec.labels,
          datasets: [{ label: spec.series, data: spec.values, backgroundColor: "#0072B2" }],
        },
        options: {
          ...common,
          plugins: { legend: { display: false }, sgMarks: { marks: spec.marks } },
          scales: { x: { title: { display: true, text: spec.axis } }, y: { beginAtZero: true } },
        },
        plugins: [marksPlugin],
      };
    }
    const stacked = spec.kind === "stacked";
    const line = spec.kind === "lines";
    return {
      type: line ? "line" : "bar",
      data: {
        labels: spec.labels,
        datasets: spec.series.map((s) => ({
          label: s.name,
          data: s.values,
          backgroundColor: s.colour,
          borderColor: s.colour,
          fill: false,
          tension: 0,
        })),
      },
      options: {
        ...common,
        scales: {
          x: { stacked },
          y: { stacked, beginAtZero: true, ticks: { precision: 0 } },
        },
      },
    };
  }

  function draw() {
    if (typeof window.Chart === "undefined") return;
    for (const canvas of document.querySelectorAll("canvas[data-chart]")) {
      const source = document.getElementById(canvas.dataset.chart);
      if (!source) continue;
      const chart = new window.Chart(canvas, config(JSON.parse(source.textContent)));
      canvas.dataset.drawn = String(chart.data.datasets.length);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
