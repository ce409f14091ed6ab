// The end-of-chapter quiz without page reloads. The quiz is a plain form that works without this
// file (post, then back to #quiz); here the same form is posted with fetch and the fragment the
// server answers replaces the quiz body in place. Focus moves to the feedback and a live region
// says what happened, so keyboard and screen reader users follow along.
(() => {
  "use strict";

  const quiz = document.querySelector("[data-quiz][data-quiz-live]");
  if (!quiz) return;
  const body = quiz.querySelector("[data-quiz-body]");
  const announce = quiz.querySelector("[data-quiz-announce]");
  let busy = false;

  function speak(text) {
    // Clear first: the same words twice in a row (two wrong answers) are still announced.
    announce.textContent = "";
    window.setTimeout(() => { announce.textContent = text; }, 50);
  }

  function settle() {
    const target = body.querySelector("[data-quiz-focus]");
    if (target) {
      target.focus({ preventScroll: true });
      target.scrollIntoView({ block: "nearest" });
      speak(target.innerText.replace(/\s+/g, " ").trim());
    } else {
      body.querySelector("input[type=radio]")?.focus();
    }
  }

  quiz.addEventListener("submit", async (event) => {
    const form = event.target.closest("[data-quiz-form]");
    if (!form) return;
    event.preventDefault();
    // A second click while the first answer is on its way would only be a replay.
    if (busy) return;
    busy = true;
    const button = form.querySelector("button[type=submit]");
    if (button) button.setAttribute("aria-disabled", "true");
    try {
      const response = await fetch(form.action, {
        method: "POST",
        body: new FormData(form),
        headers: { "X-Fragment": "quiz" },
        credentials: "same-origin",
      });
      const html = await response.text();
      if (!response.headers.get("content-type")?.startsWith("text/html") || response.redirected) {
        throw new Error(`unexpected answer ${response.status}`);
      }
      body.innerHTML = html;
      settle();
    } catch (error) {
      // Fall back to the plain form post: the server answers with the whole page.
      form.submit();
    } finally {
      busy = false;
      if (button) button.removeAttribute("aria-disabled");
    }
  });
})();
