// The whole view hierarchy over the screenshot (pre-filtering): every shown node's box, and a
// label "<ShortClass> “text”" for as many nodes as fit. Labels are placed greedily so that no
// two overlap, none runs past the image and none covers a leaf's text (the text being judged);
// a label that finds no place is abbreviated, then hidden, and stays one hover away (a
// tooltip) and in the node list under the panel (keyboard: Tab through it, each item shows its
// box). Labels are a fixed size on the screen (LABEL_PX CSS pixels), so more fit as one zooms
// in: placement runs again after each zoom or resize (one animation frame later).
//
// Speed: container boxes are ONE <path>, leaves are the viewer's candidate boxes, labels are
// one <g>; a single pointer listener on the viewport finds the node under the cursor.

import { SVG_NS, shortClass, svgEl } from "./viewer.js";

export const LABEL_PX = 11; // label font size, CSS pixels
const LINE = 1.3; // label height / font size
const PAD_PX = 2; // label padding, CSS pixels
const SNIPPETS = [24, 10, 0]; // characters of text tried, longest first (0: the class alone)

/** The label text of a node with at most `chars` characters of its text. */
export function labelText(node, chars) {
  const cls = shortClass(node.class_name) || "View";
  const text = (node.text || "").replace(/\s+/g, " ").trim();
  if (!chars || !text) return cls;
  return `${cls} “${text.length > chars ? `${text.slice(0, chars - 1)}…` : text}”`;
}

const overlaps = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** A uniform grid over the image, so a collision test looks at a few cells, not every label. */
class Grid {
  constructor(cell) { this.cell = cell; this.cells = new Map(); }
  *keys(r) {
    const c = this.cell;
    for (let i = Math.floor(r.x / c); i <= Math.floor((r.x + r.w) / c); i++) {
      for (let j = Math.floor(r.y / c); j <= Math.floor((r.y + r.h) / c); j++) yield `${i},${j}`;
    }
  }
  add(r) { for (const k of this.keys(r)) { if (!this.cells.has(k)) this.cells.set(k, []); this.cells.get(k).push(r); } }
  hits(r) {
    for (const k of this.keys(r)) for (const o of this.cells.get(k) || []) if (overlaps(r, o)) return true;
    return false;
  }
}

/** Greedy placement, in screenshot pixels. `nodes`: {bounds, text, leaf, class_name}; `unit`:
 * screenshot pixels per CSS pixel; `measure(text)`: its width in CSS pixels at LABEL_PX.
 * Returns one entry per node, in the nodes' order: {x, y, w, h, text} or null (hidden).
 * Invariants (checked by the browser suite on a real RICO screen): no two placed labels
 * overlap, each lies inside [0, W] x [0, H], and none overlaps a leaf that has text. */
export function placeLabels(nodes, { W, H, unit, measure }) {
  const h = LABEL_PX * LINE * unit;
  const pad = PAD_PX * unit;
  const placed = new Grid(Math.max(h * 4, 1));
  const texts = new Grid(Math.max(h * 4, 1));
  for (const n of nodes) {
    if (n.leaf && (n.text || "").trim()) {
      const [l, t, r, b] = n.bounds;
      texts.add({ x: l, y: t, w: r - l, h: b - t });
    }
  }
  // Leaves with text first (what is judged), then other leaves, then containers from the
  // innermost (smallest) out; top to bottom within a group.
  const rank = (n) => (n.leaf ? ((n.text || "").trim() ? 0 : 1) : 2);
  const area = (n) => (n.bounds[2] - n.bounds[0]) * (n.bounds[3] - n.bounds[1]);
  const order = nodes.map((n, k) => k).sort((a, b) => {
    const na = nodes[a], nb = nodes[b];
    return rank(na) - rank(nb) || (rank(na) === 2 ? area(na) - area(nb) : 0) || na.bounds[1] - nb.bounds[1] || na.bounds[0] - nb.bounds[0];
  });
  const result = new Array(nodes.length).fill(null);
  for (const k of order) {
    const n = nodes[k];
    const [l, t, r, b] = n.bounds;
    for (const chars of SNIPPETS) {
      const text = labelText(n, chars);
      const w = measure(text) * unit + 2 * pad;
      // Around the box: above it, below it, inside its top and bottom edges; left-aligned, then right-aligned.
      const spots = [
        [l, t - h], [l, b], [l, t], [l, b - h],
        [r - w, t - h], [r - w, b], [r - w, t], [r - w, b - h],
      ];
      for (const [x, y] of spots) {
        const rect = { x, y, w, h };
        if (x < 0 || y < 0 || x + w > W || y + h > H) continue;
        if (texts.hits(rect) || placed.hits(rect)) continue;
        placed.add(rect);
        result[k] = { ...rect, text };
        break;
      }
      if (result[k]) break;
    }
  }
  return result;
}

export class VHLayer {
  constructor({ viewer, panel, onToggle = () => {} }) {
    this.viewer = viewer;
    this.nodes = [];
    this.labels = [];
    this.on = true;
    this.onToggle = onToggle;
    this.layer = svgEl("g", { class: "vh-layer", "data-testid": "vh-layer" });
    viewer.overlayLayer.insertBefore(this.layer, viewer.candidateLayer);
    this.boxes = svgEl("path", { class: "vh-box" }, this.layer);
    this.labelLayer = svgEl("g", { class: "vh-labels" }, viewer.labelLayer);
    this.highlight = svgEl("rect", { class: "vh-hi", visibility: "hidden" }, viewer.labelLayer);
    this.tip = document.createElement("div");
    this.tip.className = "vh-tip";
    this.tip.hidden = true;
    this.tip.setAttribute("role", "status");
    viewer.viewport.append(this.tip);
    this.list = document.createElement("details");
    this.list.className = "vh-list";
    this.list.id = "vh-list";
    this.summary = document.createElement("summary");
    this.items = document.createElement("ol");
    this.list.append(this.summary, this.items);
    panel.append(this.list);
    this.ctx = document.createElement("canvas").getContext("2d");
    this.ctx.font = `${LABEL_PX}px ${getComputedStyle(this.labelLayer).fontFamily || "sans-serif"}`;
    this.widths = new Map();
    let frame = 0;
    viewer.svg.addEventListener("viewer:layout", () => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => this.place());
    });
    this.bindPointer();
    this.bindList();
  }

  async load(url) {
    this.summary.textContent = "View hierarchy: loading…";
    try {
      const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      this.setNodes((await response.json()).nodes);
    } catch (err) {
      this.summary.textContent = `View hierarchy could not be loaded (${err.message}); the candidate boxes are still drawn.`;
    }
  }

  setNodes(nodes) {
    this.nodes = nodes;
    // Containers as one path (leaves are the viewer's candidate boxes, coloured by type).
    this.boxes.setAttribute("d", nodes.filter((n) => !n.leaf).map(({ bounds: [l, t, r, b] }) => `M${l} ${t}H${r}V${b}H${l}Z`).join(""));
    this.items.replaceChildren(...nodes.map((n, k) => {
      const li = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.k = String(k);
      button.textContent = labelText(n, 60);
      if (!n.leaf) button.classList.add("container");
      li.append(button);
      return li;
    }));
    this.place();
  }

  measure(text) {
    let w = this.widths.get(text);
    if (w === undefined) { w = this.ctx.measureText(text).width; this.widths.set(text, w); }
    return w;
  }

  place() {
    if (!this.nodes.length) return;
    const unit = this.viewer.unit();
    this.labels = placeLabels(this.nodes, { W: this.viewer.W, H: this.viewer.H, unit, measure: (t) => this.measure(t) });
    const font = LABEL_PX * unit;
    const frag = document.createDocumentFragment();
    let shown = 0;
    this.labels.forEach((p, k) => {
      this.items.children[k].classList.toggle("hidden-label", !p);
      if (!p) return;
      shown += 1;
      const g = document.createElementNS(SVG_NS, "g");
      svgEl("rect", { x: p.x, y: p.y, width: p.w, height: p.h, class: "vh-label-bg", "data-k": k }, g);
      const text = svgEl("text", { x: p.x + PAD_PX * unit, y: p.y + font, "font-size": font, class: "vh-label" }, g);
      text.textContent = p.text;
      frag.append(g);
    });
    this.labelLayer.replaceChildren(frag);
    this.shownLabels = shown;
    this.summary.textContent = `View hierarchy: ${this.nodes.length} nodes, ${shown} labelled on the image; every node here (hover a box for its label)`;
  }

  setVisible(on) {
    this.on = on;
    this.viewer.svg.classList.toggle("vh-off", !on);
    if (!on) this.hide();
    this.onToggle(on);
  }

  toggle() { this.setVisible(!this.on); }

  /** The innermost shown node at a screenshot point. */
  nodeAt(p) {
    let best = -1;
    let bestArea = Infinity;
    this.nodes.forEach(({ bounds: [l, t, r, b] }, k) => {
      if (p.x >= l && p.x < r && p.y >= t && p.y < b && (r - l) * (b - t) <= bestArea) { best = k; bestArea = (r - l) * (b - t); }
    });
    return best;
  }

  show(k, anchor) {
    const n = this.nodes[k];
    if (!n || !this.on) return this.hide();
    const [l, t, r, b] = n.bounds;
    Object.entries({ x: l, y: t, width: r - l, height: b - t }).forEach(([a, v]) => this.highlight.setAttribute(a, v));
    this.highlight.setAttribute("visibility", "visible");
    this.tip.textContent = `${labelText(n, 120)} · #${n.vh_index}${n.leaf ? "" : " (container)"}`;
    this.tip.hidden = false;
    // Below the box (or above it near the bottom), inside the viewport's scrolled content.
    const vp = this.viewer.viewport;
    const canvas = this.viewer.canvas.getBoundingClientRect();
    const vr = vp.getBoundingClientRect();
    const s = canvas.width / this.viewer.W;
    const x = anchor ? anchor.x : canvas.left + l * s;
    const y = anchor ? anchor.y : canvas.top + b * s;
    const left = x - vr.left + vp.scrollLeft + 12;
    this.tip.style.left = `${Math.max(vp.scrollLeft, Math.min(left, vp.scrollLeft + vp.clientWidth - this.tip.offsetWidth - 4))}px`;
    this.tip.style.top = `${y - vr.top + vp.scrollTop + 14}px`;
  }

  hide() {
    this.tip.hidden = true;
    this.highlight.setAttribute("visibility", "hidden");
  }

  bindPointer() {
    const vp = this.viewer.viewport;
    let frame = 0;
    vp.addEventListener("pointermove", (e) => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        if (!this.on || vp.classList.contains("panning")) return this.hide();
        const k = this.nodeAt(this.viewer.toScreen(e));
        if (k < 0) this.hide(); else this.show(k, { x: e.clientX, y: e.clientY });
      });
    });
    vp.addEventListener("pointerleave", () => { cancelAnimationFrame(frame); this.hide(); });
  }

  bindList() {
    const pick = (e) => {
      const button = e.target.closest("button[data-k]");
      if (!button) return;
      if (e.type === "focusin") {
        // Keyboard: bring the node's box into view first (the screenshot may be zoomed in).
        this.show(Number(button.dataset.k));
        this.highlight.scrollIntoView({ block: "nearest", inline: "nearest" });
      }
      this.show(Number(button.dataset.k));
    };
    this.items.addEventListener("focusin", pick);
    this.items.addEventListener("pointerover", pick);
    this.items.addEventListener("focusout", () => this.hide());
    this.items.addEventListener("pointerleave", () => this.hide());
  }
}
