"""Walk a course through the public API from outside, as a new learner would, part by part in
order: each exercise's starter must run and fail its check, each trick program kept beside it
(with --tricks) must fail, and its solution must pass. Prints one line per run and a summary;
exit status 1 when any run ends otherwise.

    python scripts/walk_course_api.py --url http://127.0.0.1:8000 --username U --password P \
        [--course-dir courses/content/transformers] [--tricks] [--only SLUG,...]

The account should be a learner's that has passed nothing in the course yet: a part's course
pieces reach later parts only once it is passed (courses/content/FORMAT.md), which the walk does
in order. Needs only the standard library and PyYAML.
"""

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

RUN_WAIT_S = 300


def api(url: str, *, token: str = "", body: dict | None = None) -> dict:
    if not url.startswith(("http://", "https://")):
        raise SystemExit(f"not a web address: {url}")
    request = urllib.request.Request(url, method="POST" if body is not None else "GET")  # noqa: S310 - http(s) only
    request.add_header("Accept", "application/json")
    if token:
        request.add_header("Authorization", f"Token {token}")
    data = None
    if body is not None:
        request.add_header("Content-Type", "application/json")
        data = json.dumps(body).encode()
    while True:
        try:
            with urllib.request.urlopen(request, data=data, timeout=60) as response:  # noqa: S310 - http(s) only
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            if error.code == 429:  # the platform's runs-per-minute limit: wait as it says, then again
                time.sleep(float(error.headers.get("Retry-After") or 10))
                continue
            raise SystemExit(f"{request.method} {url}: {error.code} {error.read().decode()[:500]}") from None


def course_parts(folder: Path) -> list[tuple[int, str, list[dict]]]:
    """(number, folder, exercises) of each chapter of the course folder, in order."""
    parts = []
    for chapter in sorted((folder / "chapters").iterdir()):
        text = (chapter / "chapter.md").read_text()
        front = yaml.safe_load(text.split("---", 2)[1]) or {}
        parts.append((int(chapter.name[:2]), chapter, front.get("exercises") or []))
    return parts


def run(base: str, token: str, exercise_id: int, code: str) -> tuple[dict, float]:
    started = time.monotonic()
    created = api(f"{base}/api/runs/", token=token, body={"exercise": exercise_id, "code": code})
    deadline = started + RUN_WAIT_S
    while True:
        body = api(f"{base}/api/runs/{created['id']}/", token=token)
        if body["status"] not in ("queued", "running"):
            return body, time.monotonic() - started
        if time.monotonic() > deadline:
            return body, time.monotonic() - started
        time.sleep(0.2)


def first_check_message(body: dict) -> str:
    for event in body.get("outputs") or []:
        if event.get("type") == "check":
            return str(event.get("message", ""))
        if event.get("type") == "error":
            return f"{event.get('ename')}: {event.get('evalue')}"
    return body.get("reason") or ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--username", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--course-dir", default="courses/content/transformers")
    parser.add_argument("--tricks", action="store_true", help="Also run every trick program (each must fail).")
    parser.add_argument("--only", default="", help="Judge only these exercises (solutions of the others still run).")
    args = parser.parse_args()
    base = args.url.rstrip("/")
    token = api(f"{base}/api/auth/token/", body={"username": args.username, "password": args.password})["token"]
    ids = {item["slug"]: item["id"] for item in api(f"{base}/api/exercises/", token=token)}
    only = {slug for slug in args.only.split(",") if slug}
    wrong = total = 0
    for number, folder, exercises in course_parts(Path(args.course_dir)):
        for exercise in exercises:
            slug = exercise["slug"]
            if slug not in ids:
                print(f"Part {number:2d} {slug}: not offered by the API (unpublished?), skipped")
                continue
            programs = []
            if not only or slug in only:
                programs.append(("starter", (folder / f"{slug}.py").read_text(), False))
                if args.tricks:
                    for trick in sorted(folder.glob(f"{slug}.trick-*.py")):
                        programs.append((trick.stem.split(".", 1)[1], trick.read_text(), False))
            programs.append(("solution", (folder / f"{slug}.solution.py").read_text(), True))
            for role, code, should_pass in programs:
                body, seconds = run(base, token, ids[slug], code)
                ok = bool(body.get("passed")) is should_pass
                total += 1
                wrong += not ok
                verdict = "passed" if body.get("passed") else f"did not pass ({body['status']})"
                mark = "ok " if ok else "WRONG"
                said = "" if ok and should_pass else f": {first_check_message(body)[:160]}"
                print(f"{mark} Part {number:2d} {slug} {role}: {verdict} in {seconds:.1f} s{said}", flush=True)
    print(f"{total - wrong} of {total} runs ended as they should")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
