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
      const layer = svgEl("g", { class: "element-layer" }, viewer.svg);
      (config.page.reviewed?.submission?.elements || []).forEach((e, i) => {
        const [l, t, r, b] = e.bounds;
        svgEl("rect", { class: "el-box", x: l, y: t, width: r - l, height: b - t, "data-index": i + 1 }, layer);
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
