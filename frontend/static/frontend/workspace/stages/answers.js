// Answers: the question as fixed, an ordered list of elements (the box editor), a full answer,
// or a verdict (invalid / not answerable).

import { AnswerEditor } from "../answers.js";
import { svgEl } from "../viewer.js";

// The model's suggestion (docs/assist.md): its first-ranked element drawn dashed on the screenshot
// as a pre-annotation; "g" (or the button) puts it in the answer as an element, to keep or edit like
// any other. It never answers by itself: the annotator still submits, with their own full answer.
class Suggestion {
  constructor({ $, viewer, editor, suggestion }) {
    Object.assign(this, { viewer, editor });
    this.top = suggestion && suggestion.elements && suggestion.elements[0];
    this.button = $("#accept-suggestion");
    if (!this.top) return;
    this.layer = svgEl("g", { class: "suggestion-layer" }, viewer.svg);
    viewer.svg.addEventListener("viewer:layout", () => this.render());
    this.button?.addEventListener("click", () => this.accept());
    this.render();
  }

  get used() {
    const t = this.top;
    return this.editor.elements.some((e) => (t.vh_index !== null ? e.vh_index === t.vh_index : e.vh_index === null && e.bounds.join() === t.bounds.join()));
  }

  get available() { return Boolean(this.top) && !this.used; }

  render() {
    if (!this.layer) return;
    this.layer.replaceChildren();
    if (this.used) { if (this.button) this.button.disabled = true; return; }
    const [l, t, r, b] = this.top.bounds;
    svgEl("rect", { x: l, y: t, width: r - l, height: b - t, class: "suggested-rect", "data-testid": "suggested-box" }, this.layer);
  }

  accept() {
    if (!this.available) return;
    const t = this.top;
    if (t.vh_index !== null && this.editor.byVh.has(t.vh_index)) {
      this.editor.addCandidate({ ...this.editor.byVh.get(t.vh_index), text: t.text }, { focus: false });
    } else {
      this.editor.addBox(t.bounds.slice());
      const added = this.editor.elements[this.editor.elements.length - 1];
      added.text = t.text;
      this.editor.render({ focus: false });
      this.editor.changed();
    }
    this.render();
  }
}

export function controller({ $, form, config, viewer, onChange }) {
  const m = config.messages;
  let editor = null;
  let suggestion = null;
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
        onChange: () => { onChange(); suggestion?.render(); },
      });
      suggestion = new Suggestion({ $, viewer, editor, suggestion: config.page && config.page.suggestion });
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
      keys.add(["g", "Alt+g"], "Use the suggested element", () => suggestion.accept(), { ...g, when: () => suggestion && suggestion.available });
      keys.add(["Alt+q"], "Edit the question", () => $("#question-text").focus(), g);
      keys.add(["Alt+w", "w"], "Write the full answer", () => $("#full-answer").focus(), g);
      keys.add(["Alt+i"], "Mark the question invalid", () => form.requestSubmit($("#invalid-btn")), g);
      keys.add(["Alt+u"], "Mark the question not answerable", () => form.requestSubmit($("#na-btn")), g);
    },
  };
}
