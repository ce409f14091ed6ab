"""manage.py validate_course DIR: check a course folder without importing it (courses/content/FORMAT.md)."""

import sys

from django.core.management.base import BaseCommand

from courses.services.validation import course_validate


class Command(BaseCommand):
    help = (
        "Check a course folder as the importer does, then its references, maths and line breaks, its quizzes "
        "for right answers a pattern gives away, and run every exercise's starter and solution against its "
        "check in the sandbox. One line per problem; exit status 1 on any."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", help="The course folder (holds course.yaml).")
        parser.add_argument(
            "--backend", choices=("local", "docker", "auto"), default="auto", help="The sandbox to run exercises in."
        )
        parser.add_argument("--timings", action="store_true", help="Print each solution's run time (median of 3).")
        parser.add_argument("--no-run", action="store_true", help="Skip the sandbox runs (text checks only).")
        parser.add_argument(
            "--warm",
            action="store_true",
            help="Run every exercise as one learner, so runs after the first find a warm sandbox (warm timings).",
        )

        parser.add_argument(
            "--only",
            default="",
            metavar="SLUG[,SLUG...]",
            help="Run only these exercises in the sandbox (the text checks still cover the whole course).",
        )

    def handle(self, *args, directory, backend, timings, no_run, warm, only, **options):
        def progress(name: str) -> None:
            self.stderr.write(f"running {name}")

        report = course_validate(
            path=directory,
            backend=None if no_run else backend,
            timings=timings,
            warm=warm,
            on_exercise=progress,
            only={slug.strip() for slug in only.split(",") if slug.strip()},
        )
        for note in report.notes:
            self.stderr.write(note)
        if report.timings:
            width = max(len(t.exercise) for t in report.timings)
            if warm:
                # A run that still went cold (no warm sandbox ready yet) is marked, not hidden.
                self.stdout.write(f"{'solution run':<{width}}  warm median ms  runs ms (c: cold)")
                for timing in report.timings:
                    runs = ", ".join(
                        f"{ms}{'' if hot else 'c'}" for ms, hot in zip(timing.runs_ms, timing.warm, strict=True)
                    )
                    self.stdout.write(f"{timing.exercise:<{width}}  {timing.median_ms:>14.0f}  {runs}")
            else:
                self.stdout.write(f"{'solution run':<{width}}  median ms  runs ms")
                for timing in report.timings:
                    runs = ", ".join(str(ms) for ms in timing.runs_ms)
                    self.stdout.write(f"{timing.exercise:<{width}}  {timing.median_ms:>9.0f}  {runs}")
        for problem in report.problems:
            self.stdout.write(problem.text(directory))
        if report.problems:
            count = len(report.problems)
            self.stderr.write(f"{directory}: {count} problem{'s' if count != 1 else ''}")
            sys.exit(1)
        count = report.exercises_run
        ran = "" if no_run else f", {count} exercise{'s' if count != 1 else ''} run in the sandbox"
        self.stderr.write(f"{directory}: no problems{ran}")
