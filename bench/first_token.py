"""Time to first token on the embedded model (SmolLM2-135M, the ``local`` spec), cold and warm.

Run: ``.venv/bin/python bench/first_token.py [--runs 2]``.

* cold: ``kairox send --model local`` in a fresh process and a fresh home, from process start to
  the first byte of the reply on stdout (start-up, config, model load, assembly, prompt eval).
* warm: the second turn of a session in one process (the model is already loaded, as in
  ``kairox chat`` and ``kairox serve``), from ``facade.chat.send`` to the first token event.

The baseline, measured in the same run on the same messages (the turn's replay), is llama-cpp
alone: a fresh process that loads the GGUF and streams one token (cold), and a loaded ``Llama``
streaming its first chunk (warm). The ratio is Kairox's overhead over the raw model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kairox.app import AppFacade, TurnDone
from kairox.core.events import ModelTokenDelta
from kairox.core.messages import ChatMessage
from kairox.models.local import DEFAULT_N_CTX, N_THREADS, default_model_path

PROMPT = "Hi! In one sentence, what is a context window?"
SECOND = "And why does it matter?"

RAW_COLD = """
import json, sys, llama_cpp
messages = json.loads(sys.argv[2])
llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=int(sys.argv[3]), n_threads=int(sys.argv[4]),
                      verbose=False)
for chunk in llm.create_chat_completion(messages=messages, stream=True, max_tokens=1,
                                        temperature=0.2):
    delta = chunk["choices"][0]["delta"].get("content")
    if delta:
        sys.stdout.write(delta); sys.stdout.flush(); break
"""


def first_byte_s(cmd: list[str], env: dict[str, str]) -> float:
    """Seconds from starting ``cmd`` to the first byte on its stdout."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    first = proc.stdout.read(1)
    took = time.perf_counter() - start
    proc.stdout.read()
    if proc.wait() != 0 or not first:
        raise SystemExit(f"{cmd[:4]} failed (exit {proc.returncode})")
    return took


def dicts(messages: tuple[ChatMessage, ...]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


async def warm_turn(home: Path, workspace: Path) -> tuple[float, list[dict[str, str]]]:
    """The second turn's time to first token in one process, and the messages it sent."""
    facade = AppFacade.open(home, model="local")
    try:
        await facade.chat.open("warm", workspace=workspace)
        async for _ in facade.chat.send("warm", PROMPT):
            pass
        start = time.perf_counter()
        took = -1.0
        async for update in facade.chat.send("warm", SECOND):
            started = took < 0 and not isinstance(update, TurnDone)
            if started and isinstance(update.payload, ModelTokenDelta):  # type: ignore[union-attr]
                took = time.perf_counter() - start
        messages = await facade.context.replay("warm", 2)
        return took, dicts(messages)
    finally:
        await facade.aclose()
        facade.close()


def warm_raw(before: list[dict[str, str]], messages: list[dict[str, str]], path: Path) -> float:
    """A loaded ``Llama`` that answered ``before`` (as Kairox's first turn did), streaming the
    first chunk of ``messages`` (the second turn's exact request)."""
    import llama_cpp

    llm = llama_cpp.Llama(
        model_path=str(path), n_ctx=DEFAULT_N_CTX, n_threads=N_THREADS, verbose=False
    )
    llm.create_chat_completion(messages=before, max_tokens=64)  # the first turn
    start = time.perf_counter()
    for chunk in llm.create_chat_completion(messages=messages, stream=True, max_tokens=8):
        if chunk["choices"][0]["delta"].get("content"):
            break
    took = time.perf_counter() - start
    llm.close()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    path = default_model_path()
    with tempfile.TemporaryDirectory(prefix="kairox-ttft-") as tmp:
        root = Path(tmp)
        workspace = root / "workspace"
        workspace.mkdir()
        (workspace / "README.md").write_text("# Demo\n\nA small project.\n")
        env = {**os.environ, "KAIROX_HOME": str(root / "home-probe")}
        # One probe turn gives the exact messages of a first turn, for the raw baseline.
        subprocess.run(
            [
                sys.executable,
                "-m",
                "kairox",
                "send",
                "--model",
                "local",
                "--workspace",
                str(workspace),
                "--session",
                "probe",
                PROMPT,
            ],
            env=env,
            check=True,
            capture_output=True,
        )
        shown = subprocess.run(
            [
                sys.executable,
                "-m",
                "kairox",
                "context",
                "--workspace",
                str(workspace),
                "--session",
                "probe",
                "--show",
                "--json",
            ],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        first_messages = json.loads(shown.stdout)
        first_messages = [{"role": m["role"], "content": m["content"]} for m in first_messages]
        cold, cold_base = [], []
        for n in range(args.runs):
            run_env = {**os.environ, "KAIROX_HOME": str(root / f"home-{n}")}
            cold.append(
                first_byte_s(
                    [
                        sys.executable,
                        "-m",
                        "kairox",
                        "send",
                        "--model",
                        "local",
                        "--workspace",
                        str(workspace),
                        "--session",
                        "cold",
                        PROMPT,
                    ],
                    run_env,
                )
            )
            cold_base.append(
                first_byte_s(
                    [
                        sys.executable,
                        "-c",
                        RAW_COLD,
                        str(path),
                        json.dumps(first_messages),
                        str(DEFAULT_N_CTX),
                        str(N_THREADS),
                    ],
                    run_env,
                )
            )
        warm, warm_base = [], []
        for n in range(args.runs):
            took, messages = asyncio.run(warm_turn(root / f"home-warm-{n}", workspace))
            warm.append(took)
            warm_base.append(warm_raw(first_messages, messages, path))
    rows = [
        ("cold (process start to first token)", cold, cold_base),
        ("warm (second turn, model loaded)", warm, warm_base),
    ]
    print(f"time to first token, SmolLM2-135M local, median of {args.runs} runs")
    print(f"{'':40} {'kairox':>9} {'llama-cpp':>10} {'ratio':>7}")
    for label, ours, base in rows:
        a, b = statistics.median(ours), statistics.median(base)
        print(f"{label:40} {a:8.2f}s {b:9.2f}s {a / b:6.2f}x")


if __name__ == "__main__":
    main()
