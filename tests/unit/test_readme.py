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


def test_the_first_screen_says_what_the_default_model_can_and_cannot_do() -> None:
    first_screen = "\n".join(README.read_text().splitlines()[:30])
    assert "SmolLM2-135M" in first_screen and "does **not** propose memories" in first_screen
    assert "kairox models pull qwen2.5-coder-0.5b-instruct" in first_screen
    assert 'extract = "after_turn"' in first_screen and "Ollama" in first_screen
