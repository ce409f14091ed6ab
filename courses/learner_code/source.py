"""Python source for the downloads: names, string literals, and a learner's script made a function.

A learner's exercise code is a script: on the platform it runs as a module of its own. In the
package each exercise becomes a function of its part's module, so one part holds several exercises
and one that fails does not stop the others. That only works where the script means the same
inside a function; where it may not (the rules in `function_body_problem`), the package keeps the
script as written in a string and runs it as a module, which is exactly what the platform did.
"""

import ast
import builtins
import keyword
import re
import symtable
import textwrap
import tokenize
from io import StringIO

# Inside a function these read or bind something other than the script's own module globals.
_MODULE_SCOPE_NAMES = frozenset({"__name__", "globals", "locals", "vars", "dir"})
# Objects defined inside a function cannot be pickled by name: saving a whole model, or a worker
# process that receives a function, would fail at home where it worked on the platform.
_PICKLING_MODULES = frozenset({"pickle", "multiprocessing", "concurrent", "copyreg", "shelve"})


def identifier(text: str, *, prefix: str) -> str:
    """A lowercase Python identifier made from a slug ("one-query-three-keys" ->
    "one_query_three_keys"); `prefix` goes in front where the slug alone would not do."""
    name = re.sub(r"\W+", "_", text.strip().lower()).strip("_")
    if not name or not name.isidentifier() or keyword.iskeyword(name) or name[0].isdigit():
        name = f"{prefix}_{name}".rstrip("_")
    return name


def python_literal(text: str) -> str:
    """A string literal for `text` that a person can read: a triple-quoted string where one holds
    the text exactly (raw where the text has backslashes), else Python's own repr."""
    prefix = "r" if "\\" in text else ""
    for quote in ('"""', "'''"):
        candidate = f"{prefix}{quote}{text}{quote}"
        try:
            if ast.literal_eval(candidate) == text:
                return candidate
        except (SyntaxError, ValueError):
            continue
    return repr(text)


def markdown_plain(text: str) -> str:
    """Course Markdown for a place that has no course glossary: [[shown|term]] and [[term]]
    references become their text."""
    return re.sub(r"\[\[([^\[\]|]+?)(?:\|[^\[\]|]+?)?\]\]", r"\1", text).strip()


def function_body_problem(code: str) -> str:
    """Why the script `code` may not mean the same as the body of a function (empty: it does)."""
    try:
        tree = ast.parse(code)
        table = symtable.symtable(code, "<exercise>", "exec")
    except (SyntaxError, ValueError):
        return "it does not compile"
    for node in ast.walk(tree):
        if isinstance(node, ast.Global | ast.Nonlocal):
            return "it uses `global`, which inside a function names another variable"
        if isinstance(node, ast.ImportFrom) and (node.module == "__future__" or any(a.name == "*" for a in node.names)):
            return "it has an import that Python allows only at the top of a module"
        if isinstance(node, ast.Name) and node.id in _MODULE_SCOPE_NAMES:
            return f"it reads `{node.id}`, which is another thing inside a function"
        imported = [a.name for a in node.names] if isinstance(node, ast.Import | ast.ImportFrom) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.append(node.module)
        if any(name.split(".")[0] in _PICKLING_MODULES for name in imported) or (
            isinstance(node, ast.Attribute)
            and node.attr == "save"
            and isinstance(node.value, ast.Name)
            and node.value.id == "torch"
        ):
            return "it pickles objects, and what a function defines cannot be pickled"
    for symbol in table.get_symbols():
        # At module level the built-in serves until the script assigns the name; in a function the
        # name is local throughout, and a use before the assignment fails.
        if (symbol.is_assigned() or symbol.is_imported()) and hasattr(builtins, symbol.get_name()):
            return f"it assigns `{symbol.get_name()}`, a built-in's name"
    return ""


def _string_continuation_rows(code: str) -> set[int]:
    """Physical lines (from 1) that start inside a multi-line string: indenting them would change
    the string."""
    rows = set()
    for token in tokenize.generate_tokens(StringIO(code).readline):
        if token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            rows.update(range(token.start[0] + 1, token.end[0] + 1))
    return rows


def function_source(*, name: str, docstring: str, code: str) -> str | None:
    """`code` as the body of `def name():` under `docstring`, or None where it would not mean the
    same (then the caller keeps the script as a string). Checked by comparing syntax trees: the
    function's body is the script's, statement for statement and string for string."""
    if function_body_problem(code):
        return None
    try:
        keep = _string_continuation_rows(code)
    except (tokenize.TokenError, SyntaxError):
        return None
    lines = code.splitlines(keepends=True)
    body = "".join(
        line if row in keep or not line.strip() else "    " + line for row, line in enumerate(lines, start=1)
    )
    if body and not body.endswith("\n"):
        body += "\n"
    doc = textwrap.indent(python_literal(docstring.strip() + "\n"), "    ").lstrip()
    source = f"def {name}():\n    {doc}\n{body}"
    try:
        function = ast.parse(source).body[0]
        same = ast.dump(ast.Module(body=function.body[1:], type_ignores=[])) == ast.dump(ast.parse(code))
    except (SyntaxError, ValueError, IndexError):
        return None
    return source if same else None
