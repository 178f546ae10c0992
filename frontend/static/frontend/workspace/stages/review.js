// Review: the reviewed submission (its elements drawn over the screenshot), accept, or reject with
// a rule of the reviewed stage and a comment.

import { svgEl } from "../viewer.js";

export function controller({ $, form, config, viewer }) {
  const m = config.messages;
  return {
    get: () => ({ reason: $("#reason").value, comment: $("#comment").value }),
    set: (s) => {
      if (typeof s.reason === "string") $("#reason").value = s.reason;
      if (typeof s.comment === "string") $("#comment").value = s.comment;
    },
    start: () => {
      // Drawn as the answers page draws them (outlined, numbered in order), so the element
      // stays readable under its box.
      const layer = svgEl("g", { class: "element-layer" }, viewer.svg);
      const badge = Math.max(10, (viewer.W || 1080) / 45);
      (config.page.reviewed?.submission?.elements || []).forEach((e, i) => {
        const [l, t, r, b] = e.bounds;
        const g = svgEl("g", { class: `el-box${e.vh_index == null ? " drawn" : ""}`, "data-index": i + 1 }, layer);
        svgEl("rect", { class: "el-rect", x: l, y: t, width: r - l, height: b - t }, g);
        svgEl("circle", { cx: l, cy: t, r: badge, class: "el-badge" }, g);
        const n = svgEl("text", { x: l, y: t + badge * 0.4, "font-size": badge * 1.2, class: "el-num", "text-anchor": "middle" }, g);
        n.textContent = String(i + 1);
      });
    },
    validate: (action) => (action === "reject" && !$("#reason").value ? [["reason", m.reason]] : []),
    focus: () => $("#reason"),
    shortcuts: (keys) => {
      const g = { group: "Review" };
      keys.add(["Alt+x"], "Reject (pick the rule first)", () => form.requestSubmit($("#reject-btn")), g);
      keys.add(["r"], "Pick the rule", () => $("#reason").focus(), g);
      keys.add(["c"], "Write a comment", () => $("#comment").focus(), g);
    },
  };
}
