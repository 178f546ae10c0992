// Not-answerable questions: one plausible question the screen cannot answer.

export function controller({ $, config }) {
  return {
    get: () => ({ question: $("#q0").value }),
    set: (s) => { $("#q0").value = s.question || ""; },
    validate: () => ($("#q0").value.trim() ? [] : [["question", config.messages.empty]]),
    focus: () => $("#q0"),
    shortcuts: (keys) => {
      keys.add(["q"], "Focus the question", () => $("#q0").focus(), { group: "Not answerable" });
    },
  };
}
