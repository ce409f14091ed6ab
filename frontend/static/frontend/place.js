// Tells the server where the learner is on a chapter page (an exercise or the quiz), so
// "Continue" brings them back to it. Sent when the place changes and when the page is left.
(() => {
  "use strict";

  const url = document.currentScript?.dataset.placeUrl;
  const csrf = document.querySelector("input[name=csrfmiddlewaretoken]")?.value;
  if (!url || !csrf) return;
  let sent = "";
  let current = "";

  function placeOf(element) {
    const quiz = element.closest("#quiz");
    if (quiz) return "quiz";
    const exercise = element.closest("section.exercise[data-exercise-slug]");
    return exercise ? `exercise-${exercise.dataset.exerciseSlug}` : "";
  }

  function send() {
    if (!current || current === sent) return;
    const data = new FormData();
    data.append("place", current);
    data.append("csrfmiddlewaretoken", csrf);
    sent = current;
    if (!navigator.sendBeacon?.(url, data)) {
      fetch(url, { method: "POST", body: data, credentials: "same-origin", keepalive: true }).catch(() => {});
    }
  }

  let timer = 0;
  function reach(place) {
    if (!place) return;
    current = place;
    window.clearTimeout(timer);
    // A place passed while scrolling by does not count; one the learner stays at does.
    timer = window.setTimeout(send, 1500);
  }

  const places = document.querySelectorAll("section.exercise[data-exercise-slug], #quiz");
  if ("IntersectionObserver" in window) {
    const observer = new IntersectionObserver((entries) => {
      entries.filter((entry) => entry.isIntersecting).forEach((entry) => reach(placeOf(entry.target)));
    }, { rootMargin: "-30% 0px -30% 0px" });
    places.forEach((element) => observer.observe(element));
  }
  // Working in a place counts at once.
  ["focusin", "pointerdown"].forEach((type) => {
    document.addEventListener(type, (event) => {
      const place = event.target instanceof Element ? placeOf(event.target) : "";
      if (place) { current = place; send(); }
    });
  });
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") send(); });
  window.addEventListener("pagehide", send);
})();
