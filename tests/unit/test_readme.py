"""README examples are executed, so they cannot drift from the code."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_python_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_readme_opens_with_the_two_setup_commands() -> None:
    first_block = re.search(r"```sh\n(.*?)```", README.read_text(), flags=re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["make run", "make test"]
