// Answers: the question as fixed, an ordered list of elements (the box editor), a full answer,
// or a verdict (invalid / not answerable).

import { AnswerEditor } from "../answers.js";

export function controller({ $, form, config, viewer, onChange }) {
  const m = config.messages;
  let editor = null;
  return {
    get editor() { return editor; },
    get: () => ({ question: $("#question-text").value, full_answer: $("#full-answer").value, ...(editor ? editor.draftState() : {}) }),
    set: (s) => {
      if (typeof s.question === "string" && s.question) $("#question-text").value = s.question;
      if (typeof s.full_answer === "string") $("#full-answer").value = s.full_answer;
    },
    start: (state) => {
      editor = new AnswerEditor({
        viewer,
        candidates: config.screen.candidates || [],
        list: $("#element-list"),
        hidden: $("#elements-json"),
        empty: $("#element-empty"),
        status: $("#viewer-status"),
        state,
        onChange,
      });
    },
    validate: (action) => {
      const errors = [];
      if (!$("#question-text").value.trim()) errors.push(["question", m.question]);
      if (action !== "answer") return errors;
      if (!editor.elements.length) errors.push(["elements", m.elements]);
      else {
        const blank = editor.elements.findIndex((e) => !e.text.trim());
        if (blank >= 0) errors.push(["elements", m.element_text.replace("{n}", blank + 1)]);
      }
      if (!$("#full-answer").value.trim()) errors.push(["full_answer", m.full_answer]);
      return errors;
    },
    focus: (field) => ({ question: $("#question-text"), full_answer: $("#full-answer"), elements: $("#element-list .el-text") })[field],
    shortcuts: (keys) => {
      const g = { group: "Answer" };
      const drawnSelected = () => editor.sel >= 0 && editor.elements[editor.sel].vh_index === null;
      keys.add(["a", "Alt+a"], "Add the candidate under the cursor", () => editor.addHovered(), g);
      keys.add(["j"], "Next element", () => editor.next(1, { focus: false }), g);
      keys.add(["k"], "Previous element", () => editor.next(-1, { focus: false }), g);
      keys.add(["Alt+j"], "Next element, cursor in its text", () => editor.next(1), g);
      keys.add(["Alt+k"], "Previous element, cursor in its text", () => editor.next(-1), g);
      keys.add(["e"], "Edit the selected element's text", () => editor.editSelected(), { ...g, when: () => editor.sel >= 0 });
      keys.add(["Alt+ArrowUp"], "Move the element up", () => editor.move(-1), g);
      keys.add(["Alt+ArrowDown"], "Move the element down", () => editor.move(1), g);
      keys.add(["Delete", "x", "Alt+d"], "Remove the element", () => editor.remove(), g);
      keys.add(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"], "Nudge the selected drawn box by 1 px", (e) => {
        const d = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
        editor.nudge(d[0], d[1]);
      }, { ...g, when: drawnSelected });
      keys.add(["Shift+ArrowLeft", "Shift+ArrowRight", "Shift+ArrowUp", "Shift+ArrowDown"], "Grow / shrink the selected drawn box by 10 px", (e) => {
        const d = { ArrowLeft: [-10, 0], ArrowRight: [10, 0], ArrowUp: [0, -10], ArrowDown: [0, 10] }[e.key];
        editor.nudge(d[0], d[1], true);
      }, { ...g, when: drawnSelected });
      keys.add(["Alt+q"], "Edit the question", () => $("#question-text").focus(), g);
      keys.add(["Alt+w", "w"], "Write the full answer", () => $("#full-answer").focus(), g);
      keys.add(["Alt+i"], "Mark the question invalid", () => form.requestSubmit($("#invalid-btn")), g);
      keys.add(["Alt+u"], "Mark the question not answerable", () => form.requestSubmit($("#na-btn")), g);
    },
  };
}
