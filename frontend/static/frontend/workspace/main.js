// Entry point of an assignment page: wires the viewer, the stage's form, autosave, the lease
// countdown and the shortcuts. Everything the page needs comes from the json_script config.

import { AnswerEditor } from "./answers.js";
import { Drafts } from "./drafts.js";
import { Lease } from "./lease.js";
import { Shortcuts } from "./shortcuts.js";
import { Viewer } from "./viewer.js";

const config = JSON.parse(document.getElementById("ws-config").textContent);
const $ = (sel, root = document) => root.querySelector(sel);
const form = $("#submit-form");
const csrf = $("input[name=csrfmiddlewaretoken]", form).value;
const stage = config.stage;
const screen = config.screen;
const banner = $("#banner");
const saveStatus = $("#save-status");

function showBanner(message, kind = "error") {
  banner.textContent = message;
  banner.className = `banner ${kind}`;
  banner.hidden = !message;
}

function fieldError(field, message) {
  const slot = $(`.field-error[data-for="${field}"]`);
  if (slot) slot.textContent = message || "";
  return slot;
}

function clearErrors() {
  document.querySelectorAll(".field-error").forEach((el) => { el.textContent = ""; });
}

// --- viewer ------------------------------------------------------------------------------
const viewer = new Viewer({
  viewport: $("#viewport"),
  canvas: $("#canvas"),
  img: $("#shot"),
  svg: $("#overlay"),
  width: screen.width,
  height: screen.height,
  zoomLabel: $("#zoom-level"),
  status: $("#viewer-status"),
  dragPans: stage !== "answers",
});
viewer.drawCandidates(screen.candidates || [], { labels: stage === "prefilter" });
const overlayToggle = $("#overlay-toggle");
const opacity = $("#overlay-opacity");
const overlayKey = `ws-overlay-${stage}`;
const overlayDefault = stage === "prefilter" || stage === "answers";
overlayToggle.checked = (localStorage.getItem(overlayKey) ?? String(overlayDefault)) === "true";
opacity.value = localStorage.getItem("ws-overlay-opacity") || opacity.value;
const applyOverlay = () => { viewer.setOverlay(overlayToggle.checked); localStorage.setItem(overlayKey, String(overlayToggle.checked)); };
const applyOpacity = () => { viewer.setOpacity(opacity.value); localStorage.setItem("ws-overlay-opacity", opacity.value); };
overlayToggle.addEventListener("change", applyOverlay);
opacity.addEventListener("input", applyOpacity);
applyOverlay();
applyOpacity();
$("#zoom-in").addEventListener("click", () => viewer.zoomBy(1.25));
$("#zoom-out").addEventListener("click", () => viewer.zoomBy(1 / 1.25));
$("#zoom-fit").addEventListener("click", () => viewer.fit());

// --- the stage's state -------------------------------------------------------------------
const questionInputs = () => [...form.querySelectorAll("input[name=question]")];
let editor = null;

const stages = {
  prefilter: {
    get: () => ({ non_english_app: $("#non_english_app").checked, vh_out_of_sync: $("#vh_out_of_sync").checked, note: $("#note").value }),
    set: (s) => { $("#non_english_app").checked = !!s.non_english_app; $("#vh_out_of_sync").checked = !!s.vh_out_of_sync; $("#note").value = s.note || ""; },
    validate: () => [],
  },
  questions: {
    get: () => ({ questions: questionInputs().map((i) => i.value) }),
    set: (s) => { const qs = Array.isArray(s.questions) ? s.questions : []; questionInputs().forEach((i, k) => { i.value = typeof qs[k] === "string" ? qs[k] : ""; }); },
    validate: (action) => {
      if (action === "nothing") return [];
      const written = questionInputs().map((i) => i.value.trim()).filter(Boolean);
      if (!written.length) return [["questions", "Write at least one question, or choose “Nothing to ask”."]];
      const lower = written.map((q) => q.toLowerCase());
      if (new Set(lower).size !== lower.length) return [["questions", "The same question is written twice."]];
      return [];
    },
  },
  "not-answerable": {
    get: () => ({ question: $("#q0").value }),
    set: (s) => { $("#q0").value = s.question || ""; },
    validate: () => ($("#q0").value.trim() ? [] : [["question", "Write one question that this screen cannot answer."]]),
  },
  answers: {
    get: () => ({ question: $("#question-text").value, full_answer: $("#full-answer").value, ...(editor ? editor.draftState() : {}) }),
    set: (s) => {
      if (typeof s.question === "string" && s.question) $("#question-text").value = s.question;
      if (typeof s.full_answer === "string") $("#full-answer").value = s.full_answer;
    },
    validate: (action) => {
      const errors = [];
      if (!$("#question-text").value.trim()) errors.push(["question", "The question cannot be empty (fix its typos, keep its intent)."]);
      if (action !== "answer") return errors;
      if (!editor.elements.length) errors.push(["elements", "Select or draw at least one element (or mark the question)."]);
      else {
        const blank = editor.elements.findIndex((e) => !e.text.trim());
        if (blank >= 0) errors.push(["elements", `Element ${blank + 1} has no text: type what it shows.`]);
      }
      if (!$("#full-answer").value.trim()) errors.push(["full_answer", "Write the answer as a full sentence."]);
      return errors;
    },
  },
};
const ctl = stages[stage.startsWith("questions") ? "questions" : stage];

const draftKey = `ws-draft-${config.assignment_id}`;
const initial = Drafts.initial(draftKey, config.state);
// --- autosave and lease ------------------------------------------------------------------
const drafts = new Drafts({
  url: config.urls.draft,
  csrf,
  key: draftKey,
  getState: () => ctl.get(),
  onStatus: (kind, text, body) => {
    saveStatus.textContent = text;
    saveStatus.dataset.state = kind;
    if (kind === "saved" && body && body.lease_expires_at) lease.set(body.lease_expires_at, null);
  },
  onLeaseLost: (detail) => lease.markLost(detail),
});
ctl.set(initial.state);
if (stage === "answers") {
  editor = new AnswerEditor({
    viewer,
    candidates: screen.candidates || [],
    list: $("#element-list"),
    hidden: $("#elements-json"),
    empty: $("#element-empty"),
    status: $("#viewer-status"),
    state: initial.state,
    onChange: () => drafts.changed(),
  });
}

form.addEventListener("input", () => drafts.changed());
form.addEventListener("change", () => drafts.changed());
if (initial.source === "local") { saveStatus.textContent = "Restored your unsaved work from this browser"; drafts.changed(); }
else if (initial.source === "server" || config.restored) saveStatus.textContent = "Draft restored";

const lease = new Lease({
  root: $("#lease"),
  label: $("#lease-left"),
  button: $("#extend-btn"),
  expiresAt: config.lease_expires_at,
  serverNow: config.server_now,
  url: config.urls.extend,
  csrf,
  onWarn: () => showBanner("Your lease ends in less than 5 minutes: press Alt+L (or Extend) to keep this item.", "warn"),
  onLost: (message) => {
    drafts.save();
    const link = document.createElement("a");
    link.href = config.urls.next;
    link.textContent = "Open the stage again";
    showBanner(`${message} Your work is kept as a draft (here and on the server as far as it was saved). `, "error");
    banner.append(link, " to pick it up again if it is still free.");
  },
});
$("#extend-btn").addEventListener("click", () => { if (!banner.classList.contains("error")) showBanner(""); });

// --- submit: refused here when incomplete, with the reason next to the field ---------------
let submitting = false;
form.addEventListener("submit", (e) => {
  const action = e.submitter?.value || "submit";
  clearErrors();
  const errors = ctl.validate(action);
  if (errors.length || submitting) {
    e.preventDefault();
    errors.forEach(([field, message], k) => {
      const slot = fieldError(field, message);
      if (k === 0 && slot) slot.scrollIntoView({ block: "nearest" });
    });
    if (errors.length) {
      const first = { questions: questionInputs()[0], question: $("#question-text") || $("#q0"), full_answer: $("#full-answer"), elements: $("#element-list .el-text") }[errors[0][0]];
      first?.focus();
    }
    return;
  }
  submitting = true;
  // The posted form is the content from here on: the server keeps it (as the answer, or as the draft on a refusal).
  drafts.forget();
});
window.addEventListener("pageshow", () => { submitting = false; });
Object.entries(config.errors || {}).forEach(([field, message]) => { if (field !== "form") fieldError(field, message); });
// A refused submit came back with what was posted: make that the draft too, so a reload keeps it.
if (Object.keys(config.errors || {}).length) drafts.changed();

// Enter in a one-line field goes to the next field instead of submitting half-done work
// (submitting is Ctrl+Enter or the button).
form.addEventListener("keydown", (e) => {
  if (e.key !== "Enter" || e.ctrlKey || e.metaKey || e.altKey || e.shiftKey) return;
  if (!(e.target instanceof HTMLInputElement) || e.target.type !== "text") return;
  e.preventDefault();
  const fields = [...form.querySelectorAll("input[type=text], textarea")];
  const next = fields[fields.indexOf(e.target) + 1];
  if (next) next.focus();
});

// --- dialogs -----------------------------------------------------------------------------
const skipDialog = $("#skip-dialog");
const helpDialog = $("#help-dialog");
document.querySelectorAll("dialog [data-close]").forEach((b) => b.addEventListener("click", () => b.closest("dialog").close()));
const openSkip = () => { skipDialog.showModal(); $("#skip-reason").focus(); };
$("#skip-btn").addEventListener("click", openSkip);
// Skipped or released work is closed: this browser's copy of its draft is no longer needed.
skipDialog.querySelector("form").addEventListener("submit", () => drafts.forget());
document.querySelector("form.inline").addEventListener("submit", () => drafts.forget());
if (skipDialog.dataset.open) openSkip();
skipDialog.addEventListener("keydown", (e) => {
  // 1-3 pick a quick reason while the free-text reason is empty (Alt+1-3 at any time).
  const digit = /^Digit[123]$/.test(e.code) ? Number(e.code.slice(5)) : 0;
  if (digit && (e.altKey || !$("#skip-reason").value.trim())) {
    e.preventDefault();
    skipDialog.querySelectorAll(".quick button")[digit - 1].click();
  }
});

// --- shortcuts ---------------------------------------------------------------------------
const keys = new Shortcuts({ dialog: helpDialog, table: $("#shortcut-table") });
const primary = $("#submit-btn");
keys.add("Ctrl+Enter", "Submit and open the next one", () => form.requestSubmit(primary));
keys.add(["Alt+s", "s"], "Skip (asks for a reason)", openSkip);
keys.add(["Alt+l"], "Extend the lease", () => lease.extend());
keys.add(["Alt+o", "o"], "Boxes on / off", () => { overlayToggle.checked = !overlayToggle.checked; applyOverlay(); });
keys.add(["]"], "More opaque boxes", () => { opacity.value = Math.min(1, +opacity.value + 0.1).toFixed(1); applyOpacity(); });
keys.add(["["], "More transparent boxes", () => { opacity.value = Math.max(0.1, +opacity.value - 0.1).toFixed(1); applyOpacity(); });
keys.add(["+", "="], "Zoom in", () => viewer.zoomBy(1.25), { group: "Screenshot" });
keys.add(["-"], "Zoom out", () => viewer.zoomBy(1 / 1.25), { group: "Screenshot" });
keys.add(["0"], "Fit the screenshot", () => viewer.fit(), { group: "Screenshot" });
keys.add(["Space"], "Hold and drag to pan (or middle-drag, or scroll)", () => {}, { group: "Screenshot", when: () => false });

if (stage === "prefilter") {
  keys.add(["e", "Alt+1"], "Toggle: non-English app", () => { $("#non_english_app").click(); }, { group: "Pre-filtering" });
  keys.add(["v", "Alt+2"], "Toggle: VH out of sync", () => { $("#vh_out_of_sync").click(); }, { group: "Pre-filtering" });
  keys.add(["r", "Alt+r"], "Show / hide the sync rules (figure 3)", () => { $("#rules").open = !$("#rules").open; }, { group: "Pre-filtering" });
  keys.add(["Alt+t"], "Write a note", () => $("#note").focus(), { group: "Pre-filtering" });
}
if (stage.startsWith("questions")) {
  keys.add(["Alt+n"], "Nothing to ask on this screen", () => form.requestSubmit($("#nothing-btn")), { group: "Questions" });
  keys.add(["r", "Alt+r"], "Show / hide the writing rules", () => { $("#rules").open = !$("#rules").open; }, { group: "Questions" });
  keys.add(["Alt+ArrowDown"], "Next question field", () => {
    const inputs = questionInputs();
    const i = inputs.indexOf(document.activeElement);
    inputs[Math.min(inputs.length - 1, i + 1)].focus();
  }, { group: "Questions" });
  keys.add(["Alt+ArrowUp"], "Previous question field", () => {
    const inputs = questionInputs();
    const i = inputs.indexOf(document.activeElement);
    inputs[Math.max(0, i - 1)].focus();
  }, { group: "Questions" });
  keys.add(["q"], "Focus the first empty question field", () => (questionInputs().find((i) => !i.value) || questionInputs()[0]).focus(), { group: "Questions" });
}
if (stage === "not-answerable") {
  keys.add(["q"], "Focus the question", () => $("#q0").focus(), { group: "Not answerable" });
}
if (stage === "answers") {
  const g = { group: "Answer" };
  keys.add(["a", "Alt+a"], "Add the candidate under the cursor", () => editor.addHovered(), g);
  keys.add(["j"], "Next element", () => editor.next(1, { focus: false }), g);
  keys.add(["k"], "Previous element", () => editor.next(-1, { focus: false }), g);
  keys.add(["Alt+j"], "Next element, cursor in its text", () => editor.next(1), g);
  keys.add(["Alt+k"], "Previous element, cursor in its text", () => editor.next(-1), g);
  keys.add(["e"], "Edit the selected element's text", () => editor.editSelected(), { ...g, when: () => editor.sel >= 0 });
  keys.add(["Alt+ArrowUp"], "Move the element up", () => editor.move(-1), g);
  keys.add(["Alt+ArrowDown"], "Move the element down", () => editor.move(1), g);
  keys.add(["Delete", "x", "Alt+d"], "Remove the element", () => editor.remove(), g);
  keys.add(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"], "Nudge a drawn box (Shift: grow / shrink by 10)", (e) => {
    const step = 1;
    const d = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] }[e.key];
    editor.nudge(d[0], d[1]);
  }, { ...g, when: () => editor.sel >= 0 && editor.elements[editor.sel].vh_index === null });
  keys.add(["Shift+ArrowLeft", "Shift+ArrowRight", "Shift+ArrowUp", "Shift+ArrowDown"], "Resize a drawn box", (e) => {
    const d = { ArrowLeft: [-10, 0], ArrowRight: [10, 0], ArrowUp: [0, -10], ArrowDown: [0, 10] }[e.key];
    editor.nudge(d[0], d[1], true);
  }, { ...g, when: () => editor.sel >= 0 && editor.elements[editor.sel].vh_index === null });
  keys.add(["Alt+q"], "Edit the question", () => $("#question-text").focus(), g);
  keys.add(["Alt+w", "w"], "Write the full answer", () => $("#full-answer").focus(), g);
  keys.add(["Alt+i"], "Mark the question invalid", () => form.requestSubmit($("#invalid-btn")), g);
  keys.add(["Alt+u"], "Mark the question not answerable", () => form.requestSubmit($("#na-btn")), g);
}
keys.add(["?", "Alt+/"], "Show these shortcuts", () => keys.showHelp());
$("#help-btn").addEventListener("click", () => keys.showHelp());
if (config.errors && config.errors.form) showBanner(config.errors.form);

// For the browser tests and debugging.
window.workspace = { viewer, editor, drafts, lease, config };
document.getElementById("ws").dataset.ready = "1"; // the browser tests wait for this
