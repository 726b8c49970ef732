# SPDX-License-Identifier: Apache-2.0
"""Issue #48: every fenced ```python and ```sh block of README.md and docs/*.md runs as written.

The blocks of one document run in order, each in a fresh process, in one temporary folder
outside the checkout (a block may use the files an earlier block of the same document wrote,
as a reader copying them one after the other would), with the installed ``qrt`` and
``qrt-export`` on PATH and no PYTHONPATH. A block that needs what CI lacks (a Raspberry Pi, a
GPU, the network, a checkout, a long time) carries a line ``# doc-test: skip (<why>)`` and is
skipped with that reason; every other block must exit 0. ``python tests/test_doc_blocks.py``
prints the count of blocks run and skipped, per document.

Host quirk: where torchvision's compiled ops do not load with this torch (``operator
torchvision::nms does not exist``), Python blocks run with tests/_torch_models.py's stand-ins
for torchvision's op registrations (the model classes need none of them).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# the blocks build their models with torch and run the installed scripts: a host-side check
# (the x86-64 suite); the Arm wheels' qemu runs have neither torch nor the scripts
pytest.importorskip("torch", reason="the docs' blocks build their models with torch: the "
                    "x86-64 suite runs them")

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```(python|sh)\n(.*?)^```$", re.M | re.S)
SKIP = re.compile(r"#\s*doc-test:\s*skip\s*\((.+?)\)\s*$", re.M)
TIMEOUT = 900   # seconds per block


# README's Quick start is exactly two commands that .ci/run reads line by line (the demo, then
# the tests): it carries no marker, and CI itself runs it
QUICK_START_WHY = ("README's Quick start: .ci/run runs it (it builds and installs the checkout, "
                   "then the whole suite)")


def quick_start(text: str):
    """The Quick start's fenced block as .ci/run reads it (its lines), or None."""
    m = re.search(r"^## Quick start\n.*?^```sh\n(.*?)^```$", text, re.M | re.S)
    return None if m is None else m


def blocks(doc: Path):
    """(language, first line number, code, skip reason or None) of each fenced block."""
    text = doc.read_text()
    qs = quick_start(text) if doc.name == "README.md" else None
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        skip = SKIP.search(m.group(2))
        why = skip.group(1) if skip else None
        if qs is not None and m.start(2) == qs.start(1):
            why = QUICK_START_WHY
        out.append((m.group(1), line, m.group(2), why))
    return out


def test_readme_quick_start_is_two_commands():
    """.ci/run evals line 1 (the demo) and line 2 (the tests) of the Quick start block: no
    comment, no marker, nothing else in it."""
    qs = quick_start((ROOT / "README.md").read_text())
    assert qs is not None, "README.md has no '## Quick start' sh block"
    lines = qs.group(1).splitlines()
    assert len(lines) == 2 and not any(ln.lstrip().startswith("#") or not ln.strip()
                                       for ln in lines), lines
    assert "qrt demo" in lines[0] and "pytest" in lines[1], lines


def _torchvision_loads() -> bool:
    r = subprocess.run([sys.executable, "-c", "import torchvision"], capture_output=True,
                       timeout=300)
    return r.returncode == 0


_PY_WRAPPER = """import runpy, sys
if {stub}:
    sys.path.insert(0, {tests!r})
    import _torch_models
    _torch_models.torchvision()
    sys.path.pop(0)
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def run_block(lang, code, cwd, stub_torchvision):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.setdefault("MPLBACKEND", "Agg")
    n = len(list(cwd.glob("_block*")))
    if lang == "python":
        path = cwd / f"_block{n}.py"
        path.write_text(code)
        wrapper = _PY_WRAPPER.format(stub=stub_torchvision, tests=str(ROOT / "tests"))
        argv = [sys.executable, "-c", wrapper, str(path)]
    else:
        path = cwd / f"_block{n}.sh"
        path.write_text(code)
        argv = ["bash", "-eo", "pipefail", str(path)]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)


DOCS_WITH_BLOCKS = [d for d in DOCS if blocks(d)]


@pytest.mark.parametrize("doc", DOCS_WITH_BLOCKS, ids=[d.name for d in DOCS_WITH_BLOCKS])
def test_doc_blocks_run(doc, tmp_path):
    todo = blocks(doc)
    runnable = [b for b in todo if b[3] is None]
    if not runnable:
        pytest.skip("; ".join(f"{doc.name}:{b[1]} {b[3]}" for b in todo))
    stub = False
    if any("torchvision" in b[2] for b in runnable):
        stub = not _torchvision_loads()
    for lang, line, code, skip in todo:
        if skip is not None:
            continue
        r = run_block(lang, code, tmp_path, stub)
        assert r.returncode == 0, (f"{doc.name}:{line} ({lang}) exited {r.returncode}\n"
                                   f"--- stdout\n{r.stdout[-3000:]}\n--- stderr\n"
                                   f"{r.stderr[-3000:]}")


def test_every_skipped_block_says_why():
    for doc in DOCS:
        for lang, line, code, skip in blocks(doc):
            if "doc-test" in code and skip is None:
                raise AssertionError(f"{doc.name}:{line}: a doc-test marker without "
                                     "'skip (<reason>)'")


def test_the_tutorial_runs_here():
    """docs/tutorial.md exists and only its Pi-side steps (and the install) are skipped."""
    b = blocks(ROOT / "docs" / "tutorial.md")
    assert sum(s is None for *_, s in b) >= 5, b
    assert all("Raspberry Pi" in s or "network" in s for *_, s in b if s is not None), b


if __name__ == "__main__":
    total_run = total_skip = 0
    for doc in DOCS_WITH_BLOCKS:
        b = blocks(doc)
        sk = [(line, s) for _, line, _, s in b if s is not None]
        total_run += len(b) - len(sk)
        total_skip += len(sk)
        print(f"{doc.relative_to(ROOT)}: {len(b) - len(sk)} run, {len(sk)} skipped"
              + "".join(f"\n    line {line}: {s}" for line, s in sk))
    print(f"total: {total_run} run, {total_skip} skipped")
