// An exercise's hints, one at a time: the "Show hint" form posts to the page without JavaScript;
// here it asks the hints API instead and shows the new hint in place, so the editor, its undo
// history and the output stay as they are.

export function hintsMount({ section, api, exerciseId }) {
  const box = section.querySelector("[data-exercise-hints]");
  const form = box?.querySelector("[data-hint-form]");
  if (!form) return;
  const list = box.querySelector("[data-hint-list]");
  const count = box.querySelector("[data-hints-count]");
  const button = form.querySelector("[data-hint-button]");
  const problem = form.querySelector("[data-hints-problem]");
  const position = form.querySelector("input[name=position]");

  function show(state) {
    const known = new Set([...list.querySelectorAll("[data-hint]")].map((node) => Number(node.dataset.hint)));
    let added = null;
    for (const hint of state.revealed) {
      if (known.has(hint.position)) continue;
      const item = document.createElement("li");
      item.className = "hint";
      item.value = hint.position;
      item.dataset.hint = String(hint.position);
      item.tabIndex = -1;
      item.innerHTML = hint.html; // rendered and sanitised by the server, as the page's own hints
      list.append(item);
      added = item;
    }
    count.textContent = `${state.revealed.length} of ${state.count} shown`;
    if (state.next) {
      position.value = String(state.next);
      button.textContent = `Show hint ${state.next}`;
    } else {
      form.remove();
    }
    // Focus follows the learner's request, so a screen reader reads the hint they asked for.
    added?.focus();
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    problem.textContent = "";
    try {
      show(await api.hintReveal(exerciseId, Number(position.value)));
    } catch (error) {
      problem.textContent =
        error.status === 0 ? "The hint could not be fetched: the server cannot be reached. Try again." : error.detail;
    } finally {
      button.disabled = false;
    }
  });
}
