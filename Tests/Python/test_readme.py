"""The README's section "Use koe from Python": its Python snippets run, in order, in a folder holding a speech
file as speech.wav."""

import re
import shutil

from conftest import REPOSITORY


def readme_snippets():
    text = (REPOSITORY / "README.md").read_text()
    section = text.split("### Use koe from Python", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_readme_snippets_run(tmp_path, monkeypatch):
    snippets = readme_snippets()
    assert len(snippets) >= 3
    shutil.copy(REPOSITORY / "samples/en-f-48k.wav", tmp_path / "speech.wav")
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for snippet in snippets:
        exec(compile(snippet, "README.md", "exec"), namespace)
    assert (tmp_path / "higher.wav").stat().st_size > 0 and (tmp_path / "deep.flac").stat().st_size > 0
    assert namespace["y"].dtype.name == "float64" and len(namespace["contours"]) == 2
