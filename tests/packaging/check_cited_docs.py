#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every document a user-facing message cites is one the user has (issue 26, "Formats documented
in the repository": errors cited DUMP_FORMAT.md, a specification that is not in the repository).

Reads every C++ source of app/, views/, analysis/ and engine/, drops comments, and looks at the
string literals (what a message, a dialog or --help can show):
- a literal naming one of the design specifications (ARCHITECTURE, MODELS, ANALYSES, DUMP_FORMAT,
  CHECKPOINT_FORMAT, TASKS, STYLE .md) fails: users never see those;
- a literal citing docs/<path>.md (docs/formats/dump.md, docs/cli.md, ...) must name a file that
  exists in the repository's docs/ (a `#section` after it is allowed);
- at least the dump and checkpoint format pages must be cited somewhere (the readers' errors cite
  them), so a scan that finds nothing fails too;
- README.md and docs/*.md (but decisions.md and benchmarks.md, the project's history) cite neither a
  design specification nor a docs/ page that does not exist.
Usage: check_cited_docs.py SOURCE_DIR. Exit 0 when every literal passes; prints each offence as
FILE:LINE: problem.
"""
import re
import sys
from pathlib import Path

SPECS = ("ARCHITECTURE.md", "MODELS.md", "ANALYSES.md", "DUMP_FORMAT.md", "CHECKPOINT_FORMAT.md",
         "TASKS.md", "STYLE.md")
DOC = re.compile(r"docs/[A-Za-z0-9_./-]+\.md")


def literals(text):
    """(line, literal) for each ordinary or raw string literal, comments and char literals skipped."""
    out, i, line, n = [], 0, 1, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            k = text.find("(", i + 2)
            delim = text[i + 2:k]
            end = text.find(")" + delim + '"', k)
            end = n if end < 0 else end
            out.append((line, text[k + 1:end]))
            line += text.count("\n", i, end)
            i = end + len(delim) + 2
        elif c == '"':
            j, buf = i + 1, []
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    buf.append(text[j:j + 2])
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            out.append((line, "".join(buf)))
            i = j + 1
        elif c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            if c == "\n":
                line += 1
            i += 1
    return out


def main():
    root = Path(sys.argv[1]).resolve()
    problems, cited = [], set()
    for folder in ("app", "views", "analysis", "engine"):
        for f in sorted((root / folder).rglob("*")):
            if f.suffix not in (".cpp", ".hpp", ".cu", ".cuh", ".h"):
                continue
            where = f.relative_to(root)
            for line, lit in literals(f.read_text(encoding="utf-8", errors="replace")):
                for spec in SPECS:
                    if spec in lit:
                        problems.append(f"{where}:{line}: cites the design specification {spec}, which "
                                        f"users do not have: {lit!r}")
                for doc in DOC.findall(lit):
                    cited.add(doc)
                    if not (root / doc).is_file():
                        problems.append(f"{where}:{line}: cites {doc}, which is not in the repository")
    # The user documentation itself (README.md, docs/): it cited MODELS.md, ANALYSES.md and
    # TASKS.md for what only those held (session 32: docs/models.md, analyses.md and tasks.md now
    # do). decisions.md and benchmarks.md record the project's history against the design and may
    # name it.
    for f in [root / "README.md"] + sorted((root / "docs").rglob("*.md")):
        if f.name in ("decisions.md", "benchmarks.md") or "gpu-runs" in f.parts:
            continue
        for number, text in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            for spec in SPECS:
                if re.search(r"(?<![\w/])" + re.escape(spec), text):
                    problems.append(f"{f.relative_to(root)}:{number}: cites the design "
                                    f"specification {spec}, which users do not have")
            for doc in DOC.findall(text):
                if not (root / doc).is_file():
                    problems.append(f"{f.relative_to(root)}:{number}: cites {doc}, which is not in "
                                    f"the repository")
    for needed in ("docs/formats/dump.md", "docs/formats/checkpoint.md"):
        if needed not in cited:
            problems.append(f"no message cites {needed} (the readers' errors should)")
    for p in problems:
        print(p)
    print(f"check_cited_docs: {len(cited)} documents cited, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
