// Entry point of an assignment page: wires the viewer, the stage's controller, autosave, the
// lease countdown and the shortcuts. Everything the page needs comes from the json_script config.
//
// A stage's controller (stages/<name>.js, named by the stage's definition on the server) exports
// controller(ctx) -> { get(), set(state), validate(action) -> [[field, message]], focus(field),
// shortcuts(keys), start?(state) }: the page's state as a draft, its own checks before a submit,
// and its keys. Nothing here knows a stage by name.

import { Drafts } from "./drafts.js";
import { Lease } from "./lease.js";
import { Shortcuts } from "./shortcuts.js";
import { VHLayer } from "./vh_layer.js";
import { Viewer } from "./viewer.js";

const config = JSON.parse(document.getElementById("ws-config").textContent);
const $ = (sel, root = document) => root.querySelector(sel);
const form = $("#submit-form");
const csrf = $("input[name=csrfmiddlewaretoken]", form).value;
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
  dragPans: config.viewer.drag_pans,
});
viewer.drawCandidates(screen.candidates || []);
// Stages that label the VH (pre-filtering) draw the whole hierarchy, with placed labels.
const vhLayer = config.viewer.labels && screen.vh_url ? new VHLayer({ viewer, panel: $("#panel"), onToggle: (on) => {
  $("#vh-toggle").checked = on;
  localStorage.setItem("ws-vh-layer", String(on));
} }) : null;
if (vhLayer) {
  const toggle = $("#vh-toggle");
  toggle.closest(".tool").hidden = false;
  toggle.addEventListener("change", () => vhLayer.setVisible(toggle.checked));
  vhLayer.setVisible(localStorage.getItem("ws-vh-layer") !== "false");
  vhLayer.load(screen.vh_url);
}
const overlayToggle = $("#overlay-toggle");
const opacity = $("#overlay-opacity");
const overlayKey = `ws-overlay-${config.stage}`;
const overlayDefault = config.viewer.boxes;
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

// --- the stage's controller ------------------------------------------------------------
const { controller } = await import(config.controller);
const ctl = controller({ $, form, config, viewer, onChange: () => drafts.changed() });

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
ctl.start?.(initial.state);

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
    if (errors.length) ctl.focus(errors[0][0])?.focus();
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
if (vhLayer) keys.add(["h"], "Whole view hierarchy on / off (containers and labels)", () => vhLayer.toggle(), { group: "Screenshot" });
keys.add(["+", "="], "Zoom in", () => viewer.zoomBy(1.25), { group: "Screenshot" });
keys.add(["-"], "Zoom out", () => viewer.zoomBy(1 / 1.25), { group: "Screenshot" });
keys.add(["0"], "Fit the screenshot", () => viewer.fit(), { group: "Screenshot" });
keys.add(["Space"], "Hold and drag to pan (or middle-drag, or scroll)", () => {}, { group: "Screenshot", when: () => false });

ctl.shortcuts(keys);
keys.add(["?", "Alt+/"], "Show these shortcuts", () => keys.showHelp());
$("#help-btn").addEventListener("click", () => keys.showHelp());
if (config.errors && config.errors.form) showBanner(config.errors.form);

// --- hints come back after a reload ---------------------------------------------------------
// A question field restored from the draft asks for its writing hints again (its htmx trigger
// listens for "hints-restore" besides typing). htmx binds its triggers when the document is
// parsed; this module may run before or after that.
const restoreHints = () => form.querySelectorAll("[data-hints-restore]").forEach((input) => {
  if (input.value.trim()) input.dispatchEvent(new Event("hints-restore"));
});
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => setTimeout(restoreHints, 0));
else setTimeout(restoreHints, 0);

// --- leaving an untouched item gives it back -----------------------------------------------
// The item a stage opens by itself (after a submit, or "Open next") is leased for the project's
// lease minutes. An annotator who leaves it untouched (closes the tab, goes home, stops for the
// day) gives it back at once: a beacon to the release endpoint, with the CSRF token in its form
// body (the cookie goes with it, same origin). Touched work (a draft) stays leased, and leaving
// through the page's own forms (submit, skip, release) is not leaving it untouched.
let leavingByForm = false;
document.addEventListener("submit", (e) => { if (!e.defaultPrevented) leavingByForm = true; });
window.addEventListener("pageshow", () => { leavingByForm = false; });
window.addEventListener("pagehide", () => {
  const untouched = drafts.version === 0 && initial.source === "none" && !config.restored;
  if (leavingByForm || !untouched || lease.lost || !navigator.sendBeacon) return;
  const body = new FormData();
  body.append("csrfmiddlewaretoken", csrf);
  body.append("left", "untouched");
  navigator.sendBeacon(config.urls.release, body);
});

// For the browser tests and debugging.
window.workspace = { viewer, vhLayer, get editor() { return ctl.editor; }, drafts, lease, config };
document.getElementById("ws").dataset.ready = "1"; // the browser tests wait for this
