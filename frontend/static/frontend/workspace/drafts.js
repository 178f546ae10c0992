// Autosave. Every change is written at once to this browser's localStorage (survives a crash or
// a lost connection) and, debounced, to the server (survives anything). A local copy marked
// "dirty" is one the server has not acknowledged: on reload it wins over the server's draft.

const DEBOUNCE_MS = 600;

export class Drafts {
  constructor({ url, csrf, key, getState, onStatus, onLeaseLost }) {
    Object.assign(this, { url, csrf, key, getState, onStatus, onLeaseLost });
    this.timer = null;
    this.inflight = false;
    this.again = false;
    this.version = 0;
    this.stopped = false;
    const flush = () => { if (this.timer) this.save({ keepalive: true }); };
    window.addEventListener("pagehide", flush);
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") flush(); });
  }

  /** The state to start from: this browser's unsaved copy if any, else the server's draft. */
  static initial(key, serverState) {
    try {
      const local = JSON.parse(localStorage.getItem(key) || "null");
      if (local && local.dirty && local.state) return { state: local.state, source: "local" };
    } catch (_) { /* unreadable local copy: the server's draft is the truth */ }
    return { state: serverState || {}, source: serverState && Object.keys(serverState).length ? "server" : "none" };
  }

  changed() {
    if (this.stopped) return;
    this.version += 1;
    this.writeLocal(true);
    this.onStatus?.("pending", "Unsaved changes…");
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.save(), DEBOUNCE_MS);
  }

  writeLocal(dirty) {
    try { localStorage.setItem(this.key, JSON.stringify({ state: this.getState(), dirty, t: Date.now() })); } catch (_) { /* quota: the server copy still goes */ }
  }

  forget() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = null;
    try { localStorage.removeItem(this.key); } catch (_) { /* ignore */ }
  }

  async save({ keepalive = false } = {}) {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.stopped) return;
    if (this.inflight && !keepalive) { this.again = true; return; }
    this.inflight = true;
    const version = this.version;
    this.onStatus?.("saving", "Saving…");
    try {
      const res = await fetch(this.url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRFToken": this.csrf },
        body: JSON.stringify({ draft: this.getState() }),
        credentials: "same-origin",
        keepalive,
      });
      const body = await res.json().catch(() => ({}));
      if (res.redirected || (res.ok && !body.saved_at)) {
        // The session ended: the request was sent to the login page.
        this.onStatus?.("error", "Not saved: you are logged out (log in in another tab); kept in this browser");
      } else if (res.ok) {
        if (version === this.version) this.writeLocal(false);
        const t = new Date(body.saved_at || Date.now());
        this.onStatus?.("saved", `Draft saved ${t.toLocaleTimeString()}`, body);
      } else if (res.status === 409) {
        this.onStatus?.("lost", "Not saved to the server: lease lost (kept in this browser)");
        this.onLeaseLost?.(body.detail || "The lease is lost.");
      } else {
        this.onStatus?.("error", `Not saved (${body.detail || res.status}); kept in this browser`);
      }
    } catch (_) {
      this.onStatus?.("error", "Offline: kept in this browser, will retry");
      this.timer = setTimeout(() => this.save(), 5000);
    } finally {
      this.inflight = false;
      if (this.again) { this.again = false; this.save(); }
    }
  }
}
