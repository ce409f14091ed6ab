// Light, dark or the system's choice. Loaded in <head> without defer, so a visitor's choice from
// localStorage is on <html> before the first paint; a signed-in learner's comes from the server
// (data-theme on <html>, saved on their profile) and the toggle saves it there.
(() => {
  "use strict";

  const KEY = "easycompilers-theme";
  const THEMES = ["system", "light", "dark"];
  const root = document.documentElement;
  const account = root.hasAttribute("data-theme-account");

  function stored() {
    try { return localStorage.getItem(KEY); } catch { return null; }
  }
  if (!account && THEMES.includes(stored())) root.dataset.theme = stored();

  document.addEventListener("DOMContentLoaded", () => {
    const form = document.querySelector("form[data-theme-form]");
    if (!form) return;
    const select = form.elements.theme;
    select.value = root.dataset.theme;
    // The choice applies as it changes; the Save button is for browsers without this file.
    form.querySelector("[data-theme-submit]")?.setAttribute("hidden", "");
    form.hidden = false;
    select.addEventListener("change", () => {
      const theme = select.value;
      if (!THEMES.includes(theme)) return;
      root.dataset.theme = theme;
      if (account) {
        fetch(form.action, {
          method: "POST", body: new FormData(form), headers: { "X-Fragment": "theme" }, credentials: "same-origin",
        }).catch(() => {});
      } else {
        try { localStorage.setItem(KEY, theme); } catch { /* private mode: this page only */ }
      }
    });
  });
})();
