// Small enhancements for the reading pages. Every feature works without this file: definitions
// open as popovers, the vocabulary panel opens through the button's command, and the filter
// boxes submit ?q= to the vocabulary page.
(() => {
  "use strict";

  // Term definitions: place the popover next to the button that opened it.
  const GAP = 6;
  const MARGIN = 8;
  function placeDefinition(popover) {
    const button = document.querySelector(`[popovertarget="${CSS.escape(popover.id)}"]`);
    if (!button) return;
    const anchor = button.getBoundingClientRect();
    popover.style.position = "fixed";
    popover.style.inset = "auto";
    popover.style.margin = "0";
    const box = popover.getBoundingClientRect();
    const left = Math.min(Math.max(MARGIN, anchor.left), window.innerWidth - box.width - MARGIN);
    const below = anchor.bottom + GAP;
    const top = below + box.height <= window.innerHeight - MARGIN ? below : Math.max(MARGIN, anchor.top - GAP - box.height);
    popover.style.left = `${Math.max(MARGIN, left)}px`;
    popover.style.top = `${top}px`;
  }
  // toggle does not bubble; listen in the capture phase for every popover on the page.
  document.addEventListener(
    "toggle",
    (event) => {
      if (event.newState === "open" && event.target.classList?.contains("term-def")) placeDefinition(event.target);
    },
    true,
  );
  // A scrolled page would leave an open definition behind; close it instead.
  window.addEventListener("scroll", () => {
    document.querySelectorAll(".term-def:popover-open").forEach((popover) => popover.hidePopover());
  }, { passive: true });

  // Vocabulary panel: browsers without invoker commands open it here.
  if (!("commandForElement" in HTMLButtonElement.prototype)) {
    document.querySelectorAll("button[commandfor][command='show-modal']").forEach((button) => {
      button.addEventListener("click", () => document.getElementById(button.getAttribute("commandfor"))?.showModal());
    });
  }
  // Light dismiss for browsers without <dialog closedby>: a click on the backdrop closes it.
  document.querySelectorAll("dialog.vocab-panel").forEach((dialog) => {
    dialog.addEventListener("click", (event) => {
      if (event.target === dialog) {
        const r = dialog.getBoundingClientRect();
        const inside = event.clientX >= r.left && event.clientX <= r.right && event.clientY >= r.top && event.clientY <= r.bottom;
        if (!inside) dialog.close();
      }
    });
  });

  // Filter boxes: hide terms that do not match, as you type.
  document.querySelectorAll("input[data-filter-list]").forEach((input) => {
    const list = document.getElementById(input.dataset.filterList);
    const status = document.getElementById(input.dataset.filterStatus);
    if (!list) return;
    const entries = [...list.querySelectorAll(".term-entry")];
    const apply = () => {
      const query = input.value.trim().toLowerCase();
      let shown = 0;
      entries.forEach((entry) => {
        const match = entry.dataset.term.includes(query);
        entry.hidden = !match;
        if (match) shown += 1;
      });
      if (status) {
        status.textContent = query
          ? `${shown} of ${entries.length} terms match “${input.value.trim()}”`
          : `${entries.length} term${entries.length === 1 ? "" : "s"}`;
      }
      if (input.form?.hasAttribute("data-filter-form") && !input.closest("dialog")) {
        const url = new URL(window.location.href);
        if (query) url.searchParams.set("q", input.value.trim());
        else url.searchParams.delete("q");
        history.replaceState(null, "", url);
      }
    };
    input.addEventListener("input", apply);
    // With script the list is already filtered; Enter should not leave the page.
    input.form?.addEventListener("submit", (event) => event.preventDefault());
  });
})();
