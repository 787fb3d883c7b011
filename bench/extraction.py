"""Extraction with a local GGUF model: ``bench/extraction.py MODEL.gguf``.

For a model that ignores the ``<memory>`` protocol (``[memory] extract = "after_turn"``) and for
``facade.memory.extract`` / MCP ``memory_extract``, one extra call reads the conversation and
answers only with markers. This replays the scenarios of ``bench/local_protocol.py`` (the fixed
24 by default, ``--scenarios dev`` for the development 24) through that call exactly as the
runtime makes it (``extraction_messages`` with no known memories, ``EXTRACTION_GRAMMAR``, greedy,
the runtime's token cap), each conversation being the user's message alone, and prints:
- decision accuracy: a usable marker (well-formed, not a copy of a prompt's examples) proposed
  exactly when one is expected, split into "fact stated" / "nothing to remember";
- well-formed markers among every ``<memory`` the reply opened (the grammar makes this 100%);
- echoed examples, refused by the approval policy;
- the extraction call's median duration (the whole reply: it is only markers).
Beside the same run's baseline: the bundled SmolLM2 (``--baseline`` to change it; ``--no-baseline``
skips it), which is what ``extract = "after_turn"`` uses with the default profile. The machine is
shared: timings are noisy, the rest is deterministic.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from kairox.core.messages import ChatMessage
from kairox.memory.extraction import EXTRACTION_GRAMMAR, extraction_messages, parse_extraction
from kairox.memory.protocol import PROMPT_TEXTS
from kairox.models import ModelRequest, TextDelta
from kairox.models.local import LocalProvider, default_model_path
from kairox.runtime.extraction import EXTRACT_MAX_TOKENS
from local_protocol import Scenarios, arguments, decisions, judge, scenario_set, show_reply


@dataclass
class Result:
    right_expected: int = 0
    right_none: int = 0
    valid: int = 0
    opened: int = 0
    echoed: int = 0
    seconds: list[float] = field(default_factory=list)


async def run(path: Path, scenarios: Scenarios, *, show: bool = False) -> Result:
    provider = LocalProvider(model_path=path, n_ctx=2048)
    result = Result()
    try:
        await provider.preload()
        for index, (text, expected) in enumerate(scenarios):
            request = ModelRequest(
                messages=extraction_messages([ChatMessage(role="user", content=text)], []),
                session_id="bench",
                call_index=index,
                max_tokens=EXTRACT_MAX_TOKENS,
                temperature=0.0,
                purpose="extraction",
                grammar=EXTRACTION_GRAMMAR,
            )
            reply = ""
            started = time.perf_counter()
            async for item in provider.stream(request):
                if isinstance(item, TextDelta):
                    reply += item.text
            result.seconds.append(time.perf_counter() - started)
            parsed = parse_extraction(reply, session=False)
            right, echoed = judge(parsed.markers, expected, PROMPT_TEXTS)
            result.right_expected += right and expected
            result.right_none += right and not expected
            result.valid += len(parsed.markers)
            result.opened += reply.lower().count("<memory")
            result.echoed += echoed
            if show:
                show_reply(right, expected, text, reply)
    finally:
        await provider.aclose()
    return result


def line(label: str, result: Result, scenarios: Scenarios) -> str:
    median = statistics.median(result.seconds) if result.seconds else 0.0
    return (
        f"  {label}\n    {decisions(result.right_expected, result.right_none, scenarios)}  "
        f"well-formed {result.valid}/{result.opened}  echoed {result.echoed}  "
        f"call median {median:.2f} s"
    )


def main() -> int:
    args = arguments(__doc__.splitlines()[0]).parse_args()
    scenarios = scenario_set(args.scenarios)
    print(
        f"extraction bench: {len(scenarios)} {args.scenarios} scenarios "
        "(machine shared: timings noisy)"
    )
    measured = asyncio.run(run(args.model, scenarios, show=args.show))
    print(line(f"{args.model.name} (extraction call)", measured, scenarios), flush=True)
    if not args.no_baseline:
        model = args.baseline or default_model_path()
        baseline = asyncio.run(run(model, scenarios, show=args.show))
        print(line(f"baseline {model.name} (extraction call)", baseline, scenarios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
