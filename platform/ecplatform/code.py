"""What a learner's code may be, at every door that takes it: a run (`POST /api/runs/`) and a save
(`PUT /api/exercises/<id>/code/`), with one rule and the same words at each, so a learner can never
save code they cannot run, or run code they cannot save.

- Text: no NUL (no Python source holds one, and PostgreSQL's text columns refuse it) and no lone
  surrogate (it is not UTF-8, so it can be neither stored nor run).
- At most CODE_BYTES (settings.RUNNER_MAX_CODE_BYTES, ecplatform/limits.py) as UTF-8.

An author's code (starter, solution, check) has the content validator's own rules.
"""

from django.conf import settings


class CodeRefusedError(ValueError):
    """The code breaks the rule; `reason` names which part (an API error code)."""

    def __init__(self, message: str, *, reason: str):
        super().__init__(message)
        self.reason = reason


def code_check(code: str) -> str:
    """Returns `code` as it is when it keeps the rule, else raises CodeRefusedError."""
    if "\x00" in code:
        raise CodeRefusedError("Code contains a NUL character.", reason="code_nul")
    try:
        size = len(code.encode("utf-8"))
    except UnicodeEncodeError as exc:
        point = ord(code[exc.start])
        raise CodeRefusedError(
            f"Code contains U+{point:04X}, half of a character, which is not text.", reason="code_not_text"
        ) from None
    limit = settings.RUNNER_MAX_CODE_BYTES
    if size > limit:
        raise CodeRefusedError(f"Code is {size} bytes; the limit is {limit} bytes.", reason="code_too_large")
    return code
