// Keyboard-first: every action is registered here once; `?` lists the registry, so the help
// can never miss a shortcut. Single keys fire only outside text fields; Alt/Ctrl combos fire
// everywhere (they never type text).

const TEXT_INPUT = /^(text|search|email|url|number|password|tel)$/;

export function isTyping(el = document.activeElement) {
  if (!el) return false;
  if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
  return el.tagName === "INPUT" && TEXT_INPUT.test(el.type || "text");
}

/** "Ctrl+Alt+Shift+<key>" from an event; letters and digits by physical key (layout-proof with Alt). */
export function keyName(e) {
  const mods = [];
  if (e.ctrlKey || e.metaKey) mods.push("Ctrl");
  if (e.altKey) mods.push("Alt");
  let key = e.key;
  if (e.code && e.code.startsWith("Key")) key = e.code.slice(3).toLowerCase();
  else if (e.code && e.code.startsWith("Digit")) key = e.code.slice(5);
  else if (key === " ") key = "Space";
  const printable = key.length === 1 && !/[a-z0-9]/.test(key);
  if (e.shiftKey && !printable) mods.push("Shift");
  return [...mods, key].join("+");
}

export class Shortcuts {
  constructor({ dialog, table }) {
    this.items = [];
    this.dialog = dialog;
    this.table = table;
    document.addEventListener("keydown", (e) => this.onKey(e));
  }

  /** keys: one string or a list ("Alt+ArrowUp", "?", "Ctrl+Enter"). */
  add(keys, label, run, { group = "General", when = () => true } = {}) {
    this.items.push({ keys: Array.isArray(keys) ? keys : [keys], label, run, group, when });
  }

  onKey(e) {
    if (e.defaultPrevented || e.isComposing) return;
    const openDialog = document.querySelector("dialog[open]");
    if (openDialog && openDialog !== this.dialog) return; // dialogs own their keys
    const name = keyName(e);
    const typing = isTyping(e.target);
    if (name === "Escape" && typing && !openDialog) {
      // Esc leaves a text field: the single-key shortcuts (j / k, arrows on a drawn box) work again.
      e.preventDefault();
      e.target.blur();
      return;
    }
    for (const item of this.items) {
      if (!item.keys.includes(name)) continue;
      const single = !/^(Ctrl|Alt)\+/.test(name) && !/^F\d+$/.test(name) && name !== "Escape";
      if (single && typing) continue;
      if (!item.when()) continue;
      e.preventDefault();
      item.run(e);
      return;
    }
  }

  showHelp() {
    const body = this.table.tBodies[0];
    body.replaceChildren();
    // One section per group, in the order the groups were first registered (a group's items may
    // be registered at different times: General before and after the stage's own).
    const groups = [...new Set(this.items.map((item) => item.group))];
    for (const group of groups) {
      const tr = body.insertRow();
      const th = document.createElement("th");
      th.colSpan = 2;
      th.textContent = group;
      tr.appendChild(th);
      for (const item of this.items.filter((it) => it.group === group)) this.helpRow(body, item);
    }
    this.dialog.showModal();
  }

  helpRow(body, item) {
    const tr = body.insertRow();
    const keys = tr.insertCell();
    item.keys.forEach((k, i) => {
      if (i) keys.append(" / ");
      const kbd = document.createElement("kbd");
      kbd.textContent = k;
      keys.appendChild(kbd);
    });
    tr.insertCell().textContent = item.label;
  }
}
