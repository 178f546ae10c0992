// Question writing (both passes): up to the pass's cap of questions, or "nothing to ask".

export function controller({ $, form, config }) {
  const inputs = () => [...form.querySelectorAll("input[name=question]")];
  const m = config.messages;
  return {
    get: () => ({ questions: inputs().map((i) => i.value) }),
    set: (s) => {
      const qs = Array.isArray(s.questions) ? s.questions : [];
      inputs().forEach((i, k) => { i.value = typeof qs[k] === "string" ? qs[k] : ""; });
    },
    validate: (action) => {
      if (action === "nothing") return [];
      const written = inputs().map((i) => i.value.trim().toLowerCase());
      if (!written.some(Boolean)) return [["questions", m.empty]];
      for (let b = 0; b < written.length; b += 1) {
        const a = written.indexOf(written[b]);
        if (written[b] && a < b) return [["questions", m.repeat.replace("{a}", b + 1).replace("{b}", a + 1)]];
      }
      return [];
    },
    focus: () => inputs()[0],
    shortcuts: (keys) => {
      const g = { group: "Questions" };
      keys.add(["Alt+n"], "Nothing to ask on this screen", () => form.requestSubmit($("#nothing-btn")), g);
      keys.add(["r", "Alt+r"], "Show / hide the writing rules", () => { $("#rules").open = !$("#rules").open; }, g);
      keys.add(["Alt+ArrowDown"], "Next question field", () => {
        const all = inputs();
        all[Math.min(all.length - 1, all.indexOf(document.activeElement) + 1)].focus();
      }, g);
      keys.add(["Alt+ArrowUp"], "Previous question field", () => {
        const all = inputs();
        all[Math.max(0, all.indexOf(document.activeElement) - 1)].focus();
      }, g);
      keys.add(["q"], "Focus the first empty question field", () => (inputs().find((i) => !i.value) || inputs()[0]).focus(), g);
    },
  };
}
