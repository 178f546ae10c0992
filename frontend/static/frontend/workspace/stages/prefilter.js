// Pre-filtering: two judgments and a note. The page's controller (see main.js for the contract).

export function controller({ $ }) {
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
      keys.add(["r", "Alt+r"], "Show / hide the sync rules (figure 3)", () => { $("#rules").open = !$("#rules").open; }, g);
      keys.add(["Alt+t"], "Write a note", () => $("#note").focus(), g);
    },

  };
}
