// Pre-filtering: two judgments and a note. The page's controller (see main.js for the contract).
// The model's suggestion (docs/assist.md), when there is one: "g" (or its button) sets both boxes as
// suggested, to keep or change; it never submits by itself.

export function controller({ $ }) {
  const accept = () => {
    const button = $("#accept-suggestion");
    if (!button) return;
    $("#non_english_app").checked = button.dataset.nonEnglishApp === "1";
    $("#vh_out_of_sync").checked = button.dataset.vhOutOfSync === "1";
    $("#non_english_app").dispatchEvent(new Event("change", { bubbles: true }));
  };
  $("#accept-suggestion")?.addEventListener("click", accept);
  return {
    get: () => ({ non_english_app: $("#non_english_app").checked, vh_out_of_sync: $("#vh_out_of_sync").checked, note: $("#note").value }),
    set: (s) => {
      $("#non_english_app").checked = !!s.non_english_app;
      $("#vh_out_of_sync").checked = !!s.vh_out_of_sync;
      $("#note").value = s.note || "";
    },
    validate: () => [],
    focus: (field) => ({ note: $("#note") })[field],
    shortcuts: (keys) => {
      const g = { group: "Pre-filtering" };
      keys.add(["e", "Alt+1"], "Toggle: non-English app", () => { $("#non_english_app").click(); }, g);
      keys.add(["v", "Alt+2"], "Toggle: VH out of sync", () => { $("#vh_out_of_sync").click(); }, g);
      keys.add(["g", "Alt+g"], "Use the suggested judgments", accept, { ...g, when: () => Boolean($("#accept-suggestion")) });
      keys.add(["r", "Alt+r"], "Show / hide the sync rules (figure 3)", () => { $("#rules").open = !$("#rules").open; }, g);
      keys.add(["Alt+t"], "Write a note", () => $("#note").focus(), g);
    },

  };
}
