// The answer's box editor: an ordered list of elements, each a VH candidate (clicked) or a
// drawn box (dragged on the screenshot, then moved / resized), with its text. The list and the
// boxes are two views of one array; hovering either highlights the other.

import { svgEl, shortClass } from "./viewer.js";

const CLICK_SLOP_PX = 4; // a press that moves less than this is a click, not a drag
const MIN_BOX = 3; // screenshot px

export class AnswerEditor {
  constructor({ viewer, candidates, list, hidden, empty, status, state, onChange }) {
    Object.assign(this, { viewer, list, hidden, empty, status, onChange });
    this.byVh = new Map(candidates.map((c) => [c.vh_index, c]));
    this.elements = (state.elements || []).map((e) => this.normalise(e)).filter(Boolean);
    this.sel = Number.isInteger(state.selected) && state.selected < this.elements.length ? state.selected : this.elements.length - 1;
    this.hoverCand = null;
    this.hoverEl = -1;
    this.drag = null;
    this.layer = svgEl("g", { class: "element-layer" }, viewer.svg);
    this.hoverRect = svgEl("rect", { class: "cand-hover", visibility: "hidden" }, viewer.svg);
    this.ghost = svgEl("rect", { class: "draw-ghost", visibility: "hidden" }, viewer.svg);
    this.bindPointer();
    this.bindList();
    viewer.svg.addEventListener("viewer:layout", () => this.renderBoxes());
    this.render();
  }

  /** An element from a draft or a refused submit; candidates get their bounds back from the VH. */
  normalise(e) {
    if (!e || typeof e !== "object") return null;
    const text = typeof e.text === "string" ? e.text : "";
    const vh = Number.isInteger(e.vh_index) && e.vh_index >= 0 ? e.vh_index : null;
    if (vh !== null && this.byVh.has(vh)) return { vh_index: vh, bounds: this.byVh.get(vh).bounds.slice(), text };
    if (Array.isArray(e.bounds) && e.bounds.length === 4) return { vh_index: null, bounds: e.bounds.map(Number), text };
    return null;
  }

  /** The engine's element list: {vh_index, text} for candidates, {bounds, text} for drawn boxes. */
  submitList() {
    return this.elements.map((e) =>
      e.vh_index !== null ? { vh_index: e.vh_index, text: e.text } : { bounds: e.bounds.map(Math.round), text: e.text },
    );
  }

  draftState() {
    return { elements: this.elements.map((e) => ({ ...e, bounds: e.bounds.map(Math.round) })), selected: this.sel };
  }

  changed() {
    this.hidden.value = JSON.stringify(this.submitList());
    this.onChange?.();
  }

  // --- operations (each one a shortcut too) ---------------------------------------------

  addCandidate(c, { focus = true } = {}) {
    if (!c) return false;
    const at = this.elements.findIndex((e) => e.vh_index === c.vh_index);
    if (at >= 0) { this.select(at, { focus }); return false; }
    this.elements.push({ vh_index: c.vh_index, bounds: c.bounds.slice(), text: (c.text || "").trim() });
    this.sel = this.elements.length - 1;
    this.render({ focus });
    this.changed();
    return true;
  }

  addHovered() {
    return this.addCandidate(this.hoverCand, { focus: false });
  }

  addBox(bounds) {
    this.elements.push({ vh_index: null, bounds, text: "" });
    this.sel = this.elements.length - 1;
    this.render({ focus: true });
    this.changed();
  }

  remove(i = this.sel) {
    if (i < 0 || i >= this.elements.length) return;
    this.elements.splice(i, 1);
    this.sel = Math.min(i, this.elements.length - 1);
    this.render({ focus: this.listHasFocus() });
    this.changed();
  }

  move(delta, i = this.sel) {
    const j = i + delta;
    if (i < 0 || j < 0 || j >= this.elements.length) return;
    [this.elements[i], this.elements[j]] = [this.elements[j], this.elements[i]];
    this.sel = j;
    this.render(); // the cursor follows the row if it was in the list, else stays out of the texts
    this.changed();
  }

  moveTo(from, to) {
    if (from === to || from < 0 || to < 0 || from >= this.elements.length || to >= this.elements.length) return;
    const [el] = this.elements.splice(from, 1);
    this.elements.splice(to, 0, el);
    this.sel = to;
    this.render();
    this.changed();
  }

  select(i, { focus = true } = {}) {
    if (!this.elements.length) { this.sel = -1; this.render(); return; }
    this.sel = Math.max(0, Math.min(i, this.elements.length - 1));
    this.render({ focus });
    this.onChange?.();
  }

  /** Select the next (previous) element; with `focus`, put the cursor in its text. */
  next(step = 1, { focus = true } = {}) {
    if (!this.elements.length) return;
    if (!focus && this.listHasFocus()) document.activeElement.blur(); // single keys must not land in a text
    const base = this.sel < 0 ? (step > 0 ? -1 : 0) : this.sel;
    this.select((base + step + this.elements.length) % this.elements.length, { focus });
  }

  editSelected() {
    const input = this.list.children[this.sel]?.querySelector(".el-text");
    if (input) { input.focus(); input.select(); }
  }

  /** Nudge (or with `resize`, grow) the selected drawn box by `dx`,`dy` screenshot pixels. */
  nudge(dx, dy, resize = false) {
    const e = this.elements[this.sel];
    if (!e || e.vh_index !== null) return false;
    const b = e.bounds;
    e.bounds = resize ? this.clamp([b[0], b[1], b[2] + dx, b[3] + dy]) : this.shift(b, dx, dy);
    this.renderBoxes();
    this.changed();
    return true;
  }

  listHasFocus() {
    return this.list.contains(document.activeElement);
  }

  // --- geometry ------------------------------------------------------------------------

  clamp([l, t, r, b]) {
    const W = this.viewer.W, H = this.viewer.H;
    const L = Math.max(0, Math.min(l, r)), R = Math.min(W, Math.max(l, r));
    const T = Math.max(0, Math.min(t, b)), B = Math.min(H, Math.max(t, b));
    return [L, T, Math.max(R, L + 1), Math.max(B, T + 1)];
  }

  shift([l, t, r, b], dx, dy) {
    const w = r - l, h = b - t;
    const nl = Math.max(0, Math.min(this.viewer.W - w, l + dx));
    const nt = Math.max(0, Math.min(this.viewer.H - h, t + dy));
    return [nl, nt, nl + w, nt + h];
  }

  elementAt(p) {
    let best = -1, area = Infinity;
    this.elements.forEach((e, i) => {
      const [l, t, r, b] = e.bounds;
      if (p.x >= l && p.x < r && p.y >= t && p.y < b && (r - l) * (b - t) < area) { best = i; area = (r - l) * (b - t); }
    });
    return best;
  }

  // --- pointer: click adds, drag draws, drag a drawn box moves it, drag a corner resizes ---

  bindPointer() {
    const svg = this.viewer.svg;
    svg.addEventListener("pointerdown", (e) => {
      if (e.button !== 0 || this.viewer.spaceDown) return;
      e.preventDefault();
      const p = this.viewer.toScreen(e);
      const handle = e.target.closest && e.target.closest(".handle");
      const boxG = e.target.closest && e.target.closest(".el-box");
      svg.setPointerCapture(e.pointerId);
      if (handle && this.sel >= 0) {
        this.drag = { mode: "resize", corner: handle.dataset.h, orig: this.elements[this.sel].bounds.slice(), start: p };
      } else if (boxG && this.elements[+boxG.dataset.i]?.vh_index === null) {
        const i = +boxG.dataset.i;
        // The box has the focus now (pointerdown's default is prevented): the cursor leaves the
        // element's text, so the arrow keys nudge the box and Shift+arrows resize it.
        if (this.listHasFocus()) document.activeElement.blur();
        if (i !== this.sel) this.select(i, { focus: false });
        this.drag = { mode: "maybe-move", i, orig: this.elements[i].bounds.slice(), start: p, cx: e.clientX, cy: e.clientY };
      } else {
        this.drag = { mode: "pending", start: p, cx: e.clientX, cy: e.clientY, boxIndex: boxG ? +boxG.dataset.i : -1 };
      }
    });
    svg.addEventListener("pointermove", (e) => {
      const p = this.viewer.toScreen(e);
      const d = this.drag;
      if (!d) { this.hover(p); return; }
      const far = d.cx !== undefined && Math.hypot(e.clientX - d.cx, e.clientY - d.cy) >= CLICK_SLOP_PX;
      if (d.mode === "pending" && far) d.mode = "draw";
      if (d.mode === "maybe-move" && far) d.mode = "move";
      if (d.mode === "draw") {
        const [l, t, r, b] = this.clamp([d.start.x, d.start.y, p.x, p.y]);
        Object.entries({ x: l, y: t, width: r - l, height: b - t, visibility: "visible" }).forEach(([k, v]) => this.ghost.setAttribute(k, v));
      } else if (d.mode === "move") {
        this.elements[d.i].bounds = this.shift(d.orig, p.x - d.start.x, p.y - d.start.y);
        this.renderBoxes();
      } else if (d.mode === "resize") {
        const [l, t, r, b] = d.orig;
        const c = d.corner;
        const nb = [c.includes("w") ? p.x : l, c.includes("n") ? p.y : t, c.includes("e") ? p.x : r, c.includes("s") ? p.y : b];
        this.elements[this.sel].bounds = this.clamp(nb);
        this.renderBoxes();
      }
    });
    const up = (e) => {
      const d = this.drag;
      this.drag = null;
      if (!d) return;
      const p = this.viewer.toScreen(e);
      if (d.mode === "draw") {
        this.ghost.setAttribute("visibility", "hidden");
        const b = this.clamp([d.start.x, d.start.y, p.x, p.y]).map(Math.round);
        if (b[2] - b[0] >= MIN_BOX && b[3] - b[1] >= MIN_BOX) this.addBox(b);
      } else if (d.mode === "pending") {
        // A click: on an element already in the list it selects it, elsewhere it adds the candidate.
        // A candidate without text (a checkbox, an icon) gets the cursor in its text field, as a
        // drawn box does: what is typed next is its text, not a shortcut.
        const blank = (i) => i >= 0 && !this.elements[i].text.trim();
        if (d.boxIndex >= 0) this.select(d.boxIndex, { focus: blank(d.boxIndex) });
        else {
          const c = this.viewer.candidateAt(p);
          this.addCandidate(c, { focus: !!c && !(c.text || "").trim() });
        }
        this.hover(p); // the status line now says "in the list"
      } else if (d.mode === "move" || d.mode === "resize") {
        this.elements[d.i ?? this.sel].bounds = this.elements[d.i ?? this.sel].bounds.map(Math.round);
        this.render();
        this.changed();
      }
    };
    svg.addEventListener("pointerup", up);
    svg.addEventListener("pointercancel", () => { this.drag = null; this.ghost.setAttribute("visibility", "hidden"); });
    svg.addEventListener("pointerleave", () => { if (!this.drag) this.hover(null); });
  }

  hover(p) {
    const c = p ? this.viewer.candidateAt(p) : null;
    this.hoverCand = c;
    if (c) {
      const [l, t, r, b] = c.bounds;
      Object.entries({ x: l, y: t, width: r - l, height: b - t, visibility: "visible" }).forEach(([k, v]) => this.hoverRect.setAttribute(k, v));
      const inList = this.elements.some((e) => e.vh_index === c.vh_index);
      this.status.textContent = `${shortClass(c.class_name) || c.type} #${c.vh_index}${c.text ? ` “${c.text.slice(0, 60)}”` : " (no text)"} — ${inList ? "in the list" : "click or A to add"}`;
    } else {
      this.hoverRect.setAttribute("visibility", "hidden");
      this.status.textContent = p ? "Drag to draw a box" : "";
    }
    this.highlight(p ? this.elementAt(p) : -1);
  }

  highlight(i) {
    if (i === this.hoverEl) return;
    this.hoverEl = i;
    this.list.querySelectorAll(".el-row").forEach((row) => row.classList.toggle("hl", +row.dataset.i === i));
    this.layer.querySelectorAll(".el-box").forEach((g) => g.classList.toggle("hl", +g.dataset.i === i));
  }

  // --- rendering -----------------------------------------------------------------------

  render({ focus = false } = {}) {
    this.renderList(focus);
    this.renderBoxes();
    this.hidden.value = JSON.stringify(this.submitList());
  }

  renderBoxes() {
    const u = this.viewer.unit();
    this.layer.replaceChildren();
    const badge = 9 * u;
    this.elements.forEach((e, i) => {
      const [l, t, r, b] = e.bounds;
      const g = svgEl("g", { class: `el-box${e.vh_index === null ? " drawn" : ""}${i === this.sel ? " sel" : ""}${i === this.hoverEl ? " hl" : ""}`, "data-i": i }, this.layer);
      svgEl("rect", { x: l, y: t, width: r - l, height: b - t, "stroke-width": 2 * u, class: "el-rect" }, g);
      svgEl("circle", { cx: l, cy: t, r: badge, class: "el-badge" }, g);
      const n = svgEl("text", { x: l, y: t + badge * 0.4, "font-size": badge * 1.2, class: "el-num", "text-anchor": "middle" }, g);
      n.textContent = String(i + 1);
      g.addEventListener("pointerenter", () => this.highlight(i));
      if (i === this.sel && e.vh_index === null) {
        const s = 10 * u;
        for (const [h, x, y] of [["nw", l, t], ["ne", r, t], ["sw", l, b], ["se", r, b]]) {
          svgEl("rect", { x: x - s / 2, y: y - s / 2, width: s, height: s, class: `handle h-${h}`, "data-h": h }, this.layer);
        }
      }
    });
  }

  renderList(focus) {
    const hadFocus = this.listHasFocus();
    this.list.replaceChildren();
    this.empty.hidden = this.elements.length > 0;
    this.elements.forEach((e, i) => {
      const li = document.createElement("li");
      li.className = `el-row${i === this.sel ? " sel" : ""}`;
      li.dataset.i = i;
      li.dataset.testid = "element-row";
      const grip = document.createElement("span");
      grip.className = "el-grip";
      grip.draggable = true;
      grip.title = "Drag to reorder (or Alt+↑ / Alt+↓)";
      grip.textContent = "⋮⋮";
      const num = document.createElement("span");
      num.className = "el-num";
      num.textContent = `${i + 1}`;
      const kind = document.createElement("span");
      kind.className = "el-kind";
      if (e.vh_index !== null) {
        const c = this.byVh.get(e.vh_index);
        kind.textContent = `${shortClass(c?.class_name) || "VH"} #${e.vh_index}`;
      } else {
        kind.textContent = "drawn";
      }
      const origin = document.createElement("span");
      origin.className = "el-origin";
      origin.dataset.testid = "element-origin";
      this.showOrigin(origin, e);
      const input = document.createElement("input");
      input.type = "text";
      input.className = "el-text";
      input.value = e.text;
      input.maxLength = 2000;
      input.placeholder = e.vh_index === null ? "Type what the box shows" : "Text of the element";
      input.setAttribute("aria-label", `Text of element ${i + 1}`);
      const up = this.button("el-up", "↑", `Move element ${i + 1} up (Alt+↑)`);
      const down = this.button("el-down", "↓", `Move element ${i + 1} down (Alt+↓)`);
      const del = this.button("el-del", "✕", `Remove element ${i + 1} (Alt+D)`);
      li.append(grip, num, kind, input, origin, up, down, del);
      this.list.appendChild(li);
    });
    if ((focus || hadFocus) && this.sel >= 0) {
      const input = this.list.children[this.sel]?.querySelector(".el-text");
      if (input) input.focus();
    }
  }

  /** Where an element's text came from: the view hierarchy (which can disagree with the pixels:
   * a clock that moved on), or typed by the annotator. */
  showOrigin(span, e) {
    const vhText = e.vh_index !== null ? (this.byVh.get(e.vh_index)?.text || "").trim() : "";
    const fromVh = vhText !== "" && e.text === vhText;
    span.dataset.origin = fromVh ? "vh" : e.text.trim() ? "typed" : "none";
    span.textContent = fromVh ? "VH text" : e.text.trim() ? "typed" : "";
    span.title = fromVh
      ? "Pre-filled from the view hierarchy: check it against the screenshot"
      : e.text.trim() ? "Typed by you" : "";
  }

  button(cls, text, title) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.textContent = text;
    b.title = title;
    b.setAttribute("aria-label", title);
    return b;
  }

  bindList() {
    const rowOf = (el) => el.closest && el.closest(".el-row");
    this.list.addEventListener("input", (e) => {
      const row = rowOf(e.target);
      if (!row || !e.target.classList.contains("el-text")) return;
      this.elements[+row.dataset.i].text = e.target.value;
      this.showOrigin(row.querySelector(".el-origin"), this.elements[+row.dataset.i]);
      this.changed();
    });
    this.list.addEventListener("focusin", (e) => {
      const row = rowOf(e.target);
      if (!row) return;
      const i = +row.dataset.i;
      if (i !== this.sel) {
        this.sel = i;
        this.list.querySelectorAll(".el-row").forEach((r) => r.classList.toggle("sel", +r.dataset.i === i));
        this.renderBoxes();
      }
    });
    this.list.addEventListener("click", (e) => {
      const row = rowOf(e.target);
      if (!row) return;
      const i = +row.dataset.i;
      if (e.target.classList.contains("el-up")) this.move(-1, i);
      else if (e.target.classList.contains("el-down")) this.move(1, i);
      else if (e.target.classList.contains("el-del")) this.remove(i);
    });
    this.list.addEventListener("mouseover", (e) => { const row = rowOf(e.target); if (row) this.highlight(+row.dataset.i); });
    this.list.addEventListener("mouseleave", () => this.highlight(-1));
    // Drag and drop by the grip.
    let from = -1;
    this.list.addEventListener("dragstart", (e) => {
      const row = rowOf(e.target);
      if (!row) return;
      from = +row.dataset.i;
      e.dataTransfer.effectAllowed = "move";
      e.dataTransfer.setData("text/plain", String(from));
      row.classList.add("dragging");
    });
    this.list.addEventListener("dragover", (e) => {
      if (from < 0) return;
      e.preventDefault();
      const row = rowOf(e.target);
      this.list.querySelectorAll(".el-row").forEach((r) => r.classList.toggle("drop", r === row));
    });
    this.list.addEventListener("drop", (e) => {
      e.preventDefault();
      const row = rowOf(e.target);
      if (row && from >= 0) this.moveTo(from, +row.dataset.i);
      from = -1;
    });
    this.list.addEventListener("dragend", () => { from = -1; this.list.querySelectorAll(".el-row").forEach((r) => r.classList.remove("dragging", "drop")); });
  }
}
