"""Every code block of README.md runs as a reader would run it, or says why it cannot and which suite runs it
instead; the Python blocks of docs/python.md run too; and every relative link of README.md, ARCHITECTURE.md and
docs/*.md leads to a file (and a heading) that exists.

How each README block is run, by its language:
  sh, bash   with `bash -e -o pipefail`, in a fresh folder holding speech.wav (samples/en-f-48k.wav) and a corpus,
             corpus/spk1/a.wav and corpus/spk2/b.wav (the samples' 16 kHz voices); on PATH first the folder of the
             release koe (KOE_BINARY, else .build/release/koe), then this interpreter's (the venv with the wheel,
             so a block's `python3` imports koe and numpy). It passes when it exits 0.
  console    the same, with the lines after a `$ ` prompt.
  python     in order, in one namespace, in such a folder.
  swift      built by Tests/Library/library_test.py (`make test`); here only required to be there.
Any other language, or a fence without one, fails: no block goes unchecked unnoticed.

An HTML comment on the last non-blank line above a block changes how it is run:
  <!-- readme-test: run in the repository -->
             the block runs from the repository's root (`make demo`), with the environment of a shell, not of
             the make that runs this test.
  <!-- readme-test: not run, because WHY; covered by make TARGET[, make TARGET ...] [(HOW)] -->
             the block is not run here (it needs a sound card, a PipeWire session, a root install, ...); each
             TARGET must be a target of the Makefile, the suite that runs what the block shows. A marker that
             gives no reason or names no such suite fails.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPOSITORY

README = REPOSITORY / "README.md"
SHELLS = ("sh", "bash", "console")
RUN_HERE = "readme-test: run in the repository"
NOT_RUN = re.compile(
    r"readme-test: not run, because (?P<why>.+?); covered by (?P<suites>make [\w-]+(?:, make [\w-]+)*)(?: \((?P<how>.+)\))?$")
FENCE = re.compile(r"^```(?P<language>[\w-]*)\s*$")
BLOCK_SECONDS = 600


class Block:
    def __init__(self, path, line, language, code, marker):
        self.path, self.line, self.language, self.code, self.marker = path, line, language, code, marker

    @property
    def name(self):
        return f"{self.path.relative_to(REPOSITORY)}:{self.line}"


def code_blocks(path):
    """The fenced blocks of a Markdown file, each with its language, its first line's number and the comment
    on the last non-blank line above it."""
    lines = path.read_text().splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        above = next((line.strip() for line in reversed(lines[:index]) if line.strip()), "")
        marker = above[4:-3].strip() if above.startswith("<!--") and above.endswith("-->") else None
        end = next((j for j in range(index + 1, len(lines)) if lines[j].startswith("```")), None)
        assert end is not None, f"{path.name}:{index + 1}: a code block that never closes"
        blocks.append(Block(path, index + 1, opening["language"], "\n".join(lines[index + 1:end]) + "\n", marker))
        index = end + 1
    return blocks


def readme_blocks(*languages):
    return [block for block in code_blocks(README) if block.language in languages]


def fill(folder):
    """What the README's examples read: a voice and a small corpus."""
    shutil.copy(REPOSITORY / "samples/en-f-48k.wav", folder / "speech.wav")
    for speaker, sample in (("spk1", "a.wav"), ("spk2", "b.wav")):
        (folder / "corpus" / speaker).mkdir(parents=True)
    shutil.copy(REPOSITORY / "samples/en-m-16k.wav", folder / "corpus/spk1/a.wav")
    shutil.copy(REPOSITORY / "samples/ja-f-16k.wav", folder / "corpus/spk2/b.wav")


def shell_environment(koe_binary):
    """A reader's shell: koe and this venv's python3 first on PATH, nothing of the make running the tests."""
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("MAKE", "MFLAGS")) and name not in ("KOE_BINARY",)}
    path = [str(Path(koe_binary).resolve().parent), str(Path(sys.executable).parent), environment.get("PATH", "")]
    environment["PATH"] = os.pathsep.join(path)
    return environment


def script(block):
    if block.language != "console":
        return block.code
    return "\n".join(line[2:] for line in block.code.splitlines() if line.startswith("$ ")) + "\n"


def makefile_targets():
    return set(re.findall(r"^([\w-]+)\s*:(?!=)", (REPOSITORY / "Makefile").read_text(), flags=re.M))


# --- every block is accounted for ---------------------------------------------------------------------------

def test_every_readme_block_is_run_or_says_which_suite_runs_it():
    targets = makefile_targets()
    blocks = code_blocks(README)
    assert blocks, "README.md has no code block"
    problems = []
    for block in blocks:
        if block.language not in SHELLS + ("python", "swift"):
            problems.append(f"{block.name}: a ```{block.language} block, which nothing runs (sh, bash, console, "
                            "python or swift)")
        if block.marker is None or not block.marker.startswith("readme-test"):
            continue
        if block.marker == RUN_HERE:
            if block.language not in SHELLS:
                problems.append(f"{block.name}: only shell blocks run in the repository")
            continue
        marked = NOT_RUN.match(block.marker)
        if not marked:
            problems.append(f"{block.name}: the marker {block.marker!r} should read 'readme-test: not run, because "
                            "WHY; covered by make TARGET (HOW)' (or 'readme-test: run in the repository')")
            continue
        for suite in marked["suites"].split(", "):
            target = suite.removeprefix("make ")
            if target not in targets:
                problems.append(f"{block.name}: the covering suite `{suite}` is not a Makefile target")
    assert not problems, "\n".join(problems)
    assert readme_blocks("swift"), "README.md has no Swift block for Tests/Library/library_test.py to build"
    assert readme_blocks("python"), "README.md has no Python block"


# --- the shell blocks ---------------------------------------------------------------------------------------

def shell_blocks():
    return [block for block in readme_blocks(*SHELLS)
            if block.marker is None or not block.marker.startswith("readme-test: not run")]


@pytest.mark.parametrize("block", shell_blocks(), ids=lambda block: block.name)
def test_the_readme_shell_block_runs(block, tmp_path, koe_binary):
    if block.marker == RUN_HERE:
        folder = REPOSITORY
    else:
        folder = tmp_path
        fill(folder)
    run = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script(block)], cwd=folder,
                         env=shell_environment(koe_binary), capture_output=True, text=True, timeout=BLOCK_SECONDS)
    assert run.returncode == 0, (f"{block.name} exited {run.returncode}:\n{block.code}\nstdout:\n{ends(run.stdout)}\n"
                                 f"stderr:\n{ends(run.stderr)}")


def ends(text, length=1500):
    """The start and the end of a long output: a crash report names the crash first and ends in its threads."""
    return text if len(text) <= 2 * length else f"{text[:length]}\n[...]\n{text[-length:]}"


# --- the Python blocks --------------------------------------------------------------------------------------

def run_python(blocks, folder, monkeypatch):
    fill(folder)
    monkeypatch.chdir(folder)
    namespace = {}
    for block in blocks:
        exec(compile(block.code, block.name, "exec"), namespace)
    return namespace


def test_the_readme_python_blocks_run(tmp_path, monkeypatch):
    namespace = run_python(readme_blocks("python"), tmp_path, monkeypatch)
    assert (tmp_path / "higher.wav").stat().st_size > 0
    assert namespace["out"].shape == namespace["x"].shape


def test_the_python_blocks_of_docs_python_run(tmp_path, monkeypatch):
    blocks = [block for block in code_blocks(REPOSITORY / "docs/python.md") if block.language == "python"]
    assert len(blocks) >= 3
    namespace = run_python(blocks, tmp_path, monkeypatch)
    assert (tmp_path / "higher.wav").stat().st_size > 0 and (tmp_path / "deep.flac").stat().st_size > 0
    assert namespace["y"].dtype.name == "float64" and len(namespace["contours"]) == 2


# --- links --------------------------------------------------------------------------------------------------

def prose(path):
    """The file's text without its fenced blocks, where a link is only an example."""
    return re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)


def anchors(path):
    """GitHub's anchors for the headings of a Markdown file: lowercased, punctuation dropped, spaces as
    hyphens, a repeated one numbered."""
    seen, found = {}, set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*$", prose(path), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def test_every_relative_link_resolves():
    pages = [README, REPOSITORY / "ARCHITECTURE.md", *sorted((REPOSITORY / "docs").glob("*.md"))]
    problems = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", prose(page)):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            destination = (page.parent / file).resolve() if file else page
            where = f"{page.relative_to(REPOSITORY)}: ({target})"
            if not destination.exists():
                problems.append(f"{where}: no {destination.relative_to(REPOSITORY.resolve())}")
            elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
                problems.append(f"{where}: no heading #{anchor} in {destination.name}")
    assert not problems, "\n".join(problems)
