// The lease countdown. The server's clock is the reference (skew measured from server_now), so
// a wrong laptop clock does not lie about the time left.

const WARN_SECONDS = 5 * 60;

function fmt(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

export class Lease {
  constructor({ root, label, button, expiresAt, serverNow, url, csrf, onLost, onWarn }) {
    Object.assign(this, { root, label, button, url, csrf, onLost, onWarn });
    this.lost = false;
    this.warned = false;
    this.set(expiresAt, serverNow);
    button.addEventListener("click", () => this.extend());
    this.timer = setInterval(() => this.tick(), 1000);
    this.tick();
  }

  set(expiresAt, serverNow) {
    this.expires = expiresAt ? Date.parse(expiresAt) : NaN;
    this.skew = serverNow ? Date.parse(serverNow) - Date.now() : 0;
    this.warned = false;
  }

  remaining() {
    return (this.expires - (Date.now() + this.skew)) / 1000;
  }

  tick() {
    if (Number.isNaN(this.expires)) { this.label.textContent = "—"; return; }
    const left = this.remaining();
    this.label.textContent = left > 0 ? fmt(left) : "expired";
    this.label.dateTime = new Date(this.expires).toISOString();
    this.root.classList.toggle("warn", left > 0 && left <= WARN_SECONDS);
    this.root.classList.toggle("expired", left <= 0);
    if (left > 0 && left <= WARN_SECONDS && !this.warned) { this.warned = true; this.onWarn?.(left); }
    if (left <= 0 && !this.lost) this.markLost("Your lease on this item expired.");
  }

  markLost(message) {
    this.lost = true;
    this.root.classList.add("expired");
    this.onLost?.(message);
  }

  async extend() {
    let res;
    try {
      res = await fetch(this.url, { method: "POST", headers: { "X-CSRFToken": this.csrf }, credentials: "same-origin" });
    } catch (_) {
      this.label.textContent = "offline";
      return false; // no connection: the countdown goes on, the next tick shows the time again
    }
    const body = await res.json().catch(() => ({}));
    if (res.ok && !res.redirected && body.lease_expires_at) {
      this.lost = false;
      this.set(body.lease_expires_at, body.server_now);
      this.root.classList.remove("expired", "warn");
      this.tick();
      return true;
    }
    if (res.status === 409) this.markLost(body.detail || "The lease is lost.");
    return false;
  }
}
