"""The Python blocks of README.md and of docs/python.md run, each file's in order, in a folder holding a speech
file as speech.wav."""

import re
import shutil

from conftest import REPOSITORY


def python_blocks(page):
    return re.findall(r"^```python\n(.*?)^```", (REPOSITORY / page).read_text(), flags=re.S | re.M)


def run(page, folder, monkeypatch):
    shutil.copy(REPOSITORY / "samples/en-f-48k.wav", folder / "speech.wav")
    monkeypatch.chdir(folder)
    namespace = {}
    for snippet in python_blocks(page):
        exec(compile(snippet, page, "exec"), namespace)
    return namespace


def test_the_readme_python_blocks_run(tmp_path, monkeypatch):
    namespace = run("README.md", tmp_path, monkeypatch)
    assert (tmp_path / "higher.wav").stat().st_size > 0
    assert namespace["out"].shape == namespace["x"].shape


def test_the_python_blocks_of_docs_python_run(tmp_path, monkeypatch):
    assert len(python_blocks("docs/python.md")) >= 3
    namespace = run("docs/python.md", tmp_path, monkeypatch)
    assert (tmp_path / "higher.wav").stat().st_size > 0 and (tmp_path / "deep.flac").stat().st_size > 0
    assert namespace["y"].dtype.name == "float64" and len(namespace["contours"]) == 2
