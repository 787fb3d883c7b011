"""Does a local GGUF model follow the memory protocol? ``bench/local_protocol.py MODEL.gguf``.

Replays 24 fixed scenarios (a user message; 12 state a lasting fact and expect one marker, 12 do
not) through the local provider with the system prompt Kairox gives that model, and prints:
- decision accuracy: a marker proposed exactly when one is expected;
- well-formed markers: valid markers among every ``<memory`` the replies wrote;
- echoed examples: proposals the approval policy refuses as copies of the prompt's examples;
- visible text left: replies that still answer the user once markers are removed;
- time to first token (median).
Each figure is printed beside the same run's baseline, the bundled SmolLM2 (``--baseline`` to
change it, ``--no-baseline`` to skip). The machine is shared: timings are noisy, the rest is not.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kairox.core.messages import ChatMessage
from kairox.memory.markers import MarkerStream
from kairox.memory.protocol import PROMPT_TEXTS
from kairox.memory.service import Proposal, copied_from_examples
from kairox.models import ModelRequest, TextDelta
from kairox.models.catalog import model_for_path
from kairox.models.local import LocalProvider, default_model_path
from kairox.runtime.prompts import build_system_prompt

SCENARIOS: tuple[tuple[str, bool], ...] = (
    ("Hi! My name is Dana and I prefer short answers. Please remember that.", True),
    ("I always write my commit messages in the Conventional Commits style.", True),
    ("This project uses PostgreSQL 17 as its database.", True),
    ("Please remember that I am vegetarian.", True),
    ("We run our tests with pytest in this repository.", True),
    ("I work in the Berlin time zone.", True),
    ("Our team decided to format all Python code with ruff.", True),
    ("I prefer tabs over spaces for indentation.", True),
    ("Remember that the production server is deployed on Kubernetes.", True),
    ("My favourite editor is Neovim.", True),
    ("In this project, every pull request needs two approvals.", True),
    ("Call me Sam from now on, that's my name.", True),
    ("What is the capital of France?", False),
    ("Can you explain what a Python list comprehension is?", False),
    ("Hello! How are you today?", False),
    ("Write a haiku about the sea.", False),
    ("What is 12 times 7?", False),
    ("Thanks, that was helpful.", False),
    ("How do I reverse a string in Python?", False),
    ("Tell me a fun fact about octopuses.", False),
    ("What does HTTP stand for?", False),
    ("Can you summarise what a hash table is in one sentence?", False),
    ("Good morning!", False),
    ("Translate 'thank you' into Spanish.", False),
)


@dataclass
class Result:
    right: int = 0
    valid: int = 0
    opened: int = 0
    echoed: int = 0
    answered: int = 0
    ttft: list[float] | None = None


async def run(path: Path) -> Result:
    kind = "short" if model_for_path(path).protocol == "short" else "local"
    system = build_system_prompt("", kind=kind)
    provider = LocalProvider(model_path=path, n_ctx=2048)
    result = Result(ttft=[])
    try:
        await provider.preload()
        for index, (text, expected) in enumerate(SCENARIOS):
            request = ModelRequest(
                messages=(
                    ChatMessage(role="system", content=system),
                    ChatMessage(role="user", content=text),
                ),
                session_id="bench",
                call_index=index,
                max_tokens=160,
                temperature=0.0,
            )
            stream = MarkerStream()
            visible, markers, rejected = "", [], 0
            started = time.perf_counter()
            first: float | None = None
            async for item in provider.stream(request):
                if isinstance(item, TextDelta):
                    first = first or time.perf_counter() - started
                    parsed = stream.feed(item.text)
                    visible += parsed.visible
                    markers += parsed.markers
                    rejected += len(parsed.rejected)
            tail = stream.close()
            visible += tail.visible
            markers += tail.markers
            rejected += len(tail.rejected)
            assert result.ttft is not None
            result.ttft.append(first or 0.0)
            result.right += bool(markers) == expected
            result.valid += len(markers)
            result.opened += len(markers) + rejected
            result.echoed += sum(
                copied_from_examples(Proposal(m.scope, m.key, m.body), PROMPT_TEXTS) is not None
                for m in markers
            )
            result.answered += bool(visible.strip())
    finally:
        await provider.aclose()
    return result


def line(label: str, result: Result) -> str:
    n = len(SCENARIOS)
    formed = f"{result.valid}/{result.opened}" if result.opened else "0/0"
    ttft = statistics.median(result.ttft or [0.0])
    return (
        f"  {label:<44} decisions {result.right}/{n} ({result.right / n:.0%})  "
        f"well-formed {formed}  echoed {result.echoed}  visible text {result.answered}/{n}  "
        f"TTFT median {ttft:.2f} s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="the GGUF file to measure")
    parser.add_argument("--baseline", type=Path, help="default: the bundled SmolLM2")
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    print(f"local protocol bench: {len(SCENARIOS)} scenarios (machine shared: timings noisy)")
    measured = asyncio.run(run(args.model))
    print(line(args.model.name, measured))
    if not args.no_baseline:
        baseline = args.baseline or default_model_path()
        print(line(f"baseline {baseline.name}", asyncio.run(run(baseline))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
