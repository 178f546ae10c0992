// The screenshot viewer: an <img> with an SVG overlay whose viewBox is the screenshot's own
// pixel space (0 0 W H), so boxes stay aligned at any zoom and window size. Zoom resizes the
// canvas; the viewport scrolls (pan with the scrollbars, the wheel, Space+drag or middle-drag).

export const SVG_NS = "http://www.w3.org/2000/svg";

export function svgEl(tag, attrs = {}, parent = null) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (parent) parent.appendChild(el);
  return el;
}

export function shortClass(name) {
  if (!name) return "";
  const parts = String(name).split(/[.$]/); // "com.android.internal.policy.PhoneWindow$DecorView" -> "DecorView"
  return parts[parts.length - 1];
}

const MIN_ZOOM = 0.5;
const MAX_ZOOM = 6;

export class Viewer {
  /** dragPans: a plain left-drag pans (stages where dragging draws nothing). */
  constructor({ viewport, canvas, img, svg, width, height, zoomLabel, status, dragPans = false }) {
    Object.assign(this, { viewport, canvas, img, svg, W: width, H: height, zoomLabel, status, dragPans });
    this.zoom = 1;
    this.spaceDown = false;
    this.overlayLayer = svgEl("g", { class: "overlay-layer" }, svg);
    this.candidateLayer = svgEl("g", { class: "candidate-layer" }, this.overlayLayer);
    this.labelLayer = svgEl("g", { class: "label-layer" }, this.overlayLayer);
    this.candidates = [];
    new ResizeObserver(() => this.layout()).observe(viewport);
    this.layout();
    this.bindPan();
    viewport.addEventListener(
      "wheel",
      (e) => {
        if (!e.ctrlKey) return; // plain wheel scrolls (pans); Ctrl+wheel zooms around the cursor
        e.preventDefault();
        this.setZoom(this.zoom * (e.deltaY < 0 ? 1.15 : 1 / 1.15), e);
      },
      { passive: false },
    );
  }

  fitScale() {
    const w = Math.max(this.viewport.clientWidth - 12, 50);
    const h = Math.max(this.viewport.clientHeight - 12, 50);
    return Math.min(w / this.W, h / this.H);
  }

  layout() {
    const s = this.fitScale() * this.zoom;
    this.canvas.style.width = `${Math.round(this.W * s)}px`;
    this.canvas.style.height = `${Math.round(this.H * s)}px`;
    if (this.zoomLabel) {
      // The real scale, not the zoom relative to "fit": what one screenshot pixel is on this screen.
      const dpr = window.devicePixelRatio || 1;
      this.zoomLabel.textContent = `Zoom ${Math.round(s * 100)}% · 1 screenshot px = ${s.toFixed(2)} CSS px`;
      this.zoomLabel.title = `${this.W}×${this.H} screenshot shown at ${Math.round(this.W * s)}×${Math.round(this.H * s)} CSS px (${(s * dpr).toFixed(2)} device px per screenshot px); ${Math.round(this.zoom * 100)}% of "fit"`;
      this.zoomLabel.dataset.scale = String(s);
    }
    this.svg.dispatchEvent(new CustomEvent("viewer:layout"));
  }

  /** Zoom, keeping the screenshot point under `anchor` (a mouse event) or the centre still. */
  setZoom(z, anchor = null) {
    z = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, z));
    const vr = this.viewport.getBoundingClientRect();
    const cx = anchor ? anchor.clientX : vr.left + vr.width / 2;
    const cy = anchor ? anchor.clientY : vr.top + vr.height / 2;
    const before = this.toScreen({ clientX: cx, clientY: cy });
    this.zoom = z;
    this.layout();
    const r = this.svg.getBoundingClientRect();
    const px = r.left + (before.x * r.width) / this.W;
    const py = r.top + (before.y * r.height) / this.H;
    this.viewport.scrollLeft += px - cx;
    this.viewport.scrollTop += py - cy;
  }

  zoomBy(f) { this.setZoom(this.zoom * f); }
  fit() { this.setZoom(1); }

  /** Screenshot pixels of a pointer event. */
  toScreen(evt) {
    const r = this.svg.getBoundingClientRect();
    return { x: ((evt.clientX - r.left) * this.W) / r.width, y: ((evt.clientY - r.top) * this.H) / r.height };
  }

  /** How many screenshot pixels one CSS pixel covers at the current zoom. */
  unit() {
    const r = this.svg.getBoundingClientRect();
    return r.width ? this.W / r.width : 1;
  }

  setOverlay(on) {
    this.svg.classList.toggle("overlay-off", !on);
  }

  setOpacity(v) {
    this.overlayLayer.style.opacity = String(v);
  }

  /** Draw the VH candidates (the leaves; pre-filtering adds the whole VH with labels: vh_layer.js). */
  drawCandidates(candidates) {
    this.candidates = candidates;
    this.candidateLayer.replaceChildren();
    for (const c of candidates) {
      const [l, t, r, b] = c.bounds;
      svgEl("rect", { x: l, y: t, width: r - l, height: b - t, class: `cand type-${c.type || "other"}`, "data-vh": c.vh_index }, this.candidateLayer);
    }
  }

  /** The smallest candidate containing the point (nested boxes: the innermost one wins). */
  candidateAt(p) {
    let best = null;
    let bestArea = Infinity;
    for (const c of this.candidates) {
      const [l, t, r, b] = c.bounds;
      if (p.x >= l && p.x < r && p.y >= t && p.y < b) {
        const area = (r - l) * (b - t);
        if (area < bestArea) { best = c; bestArea = area; }
      }
    }
    return best;
  }

  bindPan() {
    let pan = null;
    const start = (e) => {
      if (!(e.button === 1 || (e.button === 0 && (this.spaceDown || this.dragPans)))) return;
      e.preventDefault();
      e.stopPropagation();
      pan = { x: e.clientX, y: e.clientY, sl: this.viewport.scrollLeft, st: this.viewport.scrollTop };
      this.viewport.classList.add("panning");
      this.viewport.setPointerCapture(e.pointerId);
    };
    this.viewport.addEventListener("pointerdown", start, true);
    this.viewport.addEventListener("pointermove", (e) => {
      if (!pan) return;
      this.viewport.scrollLeft = pan.sl - (e.clientX - pan.x);
      this.viewport.scrollTop = pan.st - (e.clientY - pan.y);
    });
    const end = () => { pan = null; this.viewport.classList.remove("panning"); };
    this.viewport.addEventListener("pointerup", end);
    this.viewport.addEventListener("pointercancel", end);
    const typing = () => /INPUT|TEXTAREA|SELECT/.test(document.activeElement?.tagName || "");
    document.addEventListener("keydown", (e) => {
      // Space pans only over the screenshot (elsewhere it keeps pressing buttons and ticking boxes).
      const here = document.activeElement === document.body || this.viewport.matches(":hover");
      if (e.code === "Space" && !typing() && here) { this.spaceDown = true; this.viewport.classList.add("can-pan"); e.preventDefault(); }
    });
    document.addEventListener("keyup", (e) => {
      if (e.code === "Space") { this.spaceDown = false; this.viewport.classList.remove("can-pan"); }
    });
  }
}
