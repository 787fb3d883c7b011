"""The ContextAssembler: decides what one model request holds, within an exact token budget.

Sources are filled in priority order (DESIGN section 8): the system prompt and the new prompt
(never dropped), approved memories, the newest compaction summary, this turn's tool rounds, the
latest exchange, retrieval hits (each up to its quota), then older history by whole exchanges,
newest first. Every
count is exact and additive per message, so the request never exceeds the budget, and the trace
records every candidate by reference (with why it was left out) for replay. Of the memories in
view, a turn considers the ``TURN_MEMORIES`` most relevant to the prompt, so its trace (the
``ContextAssembled`` event) stays small whatever the memory count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from kairox.context.assembly_input import Assembly as Assembly
from kairox.context.assembly_input import AssemblyInput as AssemblyInput
from kairox.context.assembly_input import Quotas as Quotas
from kairox.context.history import HistoryItem
from kairox.context.render import (
    Cut,
    Plan,
    block_text,
    cut_messages,
    escape_data,
    fit_text,
    hit_entry,
    hit_ref,
    memory_body,
    memory_entry,
    message_cost,
    render,
    system_text,
)
from kairox.context.tokens import Tokenizer
from kairox.context.windows import Budget
from kairox.core.errors import ContextOverflow
from kairox.core.events import ContextAssembled, TraceItem
from kairox.core.messages import ChatMessage
from kairox.core.records import MemoryRecord
from kairox.core.types import ContextSource, MemoryStatus
from kairox.retrieval.types import RetrievalHit
from kairox.store.words import is_ngram, words

OVER_QUOTA = "over {} quota"
# The trace item of the tool definitions (their JSON schemas), counted inside the budget.
TOOLS_REF = "tools"
OUTRANKED = "memories exceed the budget: outranked by relevance"
OLDER_THAN_CUT = "older than the history cut"
DOES_NOT_FIT = "does not fit"
NOT_ACCEPTED = "not accepted"
DUPLICATE = "duplicate of an earlier hit"
BELOW_FLOOR = "below the relevance floor"

COUNT_CACHE_SIZE = 4096
TURN_MEMORIES = 32
"""Memories one assembly considers: the most relevant to the prompt (``_memory_rank``). Each is
a trace item (about 200 bytes), so this bounds what memories add to a ``ContextAssembled``
event (under 16 KB with the rest of a turn) however many the home holds; a memory block
rarely has room for more."""


@dataclass(slots=True)
class _Entry:
    """A candidate line of a data block (a memory or a retrieved passage)."""

    ref: str
    source: ContextSource
    text: str
    cost: int  # its share of the block: count(text) + 1 for the line break
    source_name: str | None
    memory: MemoryRecord | None = None
    hit: RetrievalHit | None = None
    included: bool = False
    reason: str | None = None
    cut: Cut | None = None


@dataclass(slots=True)
class _Slot:
    """A history candidate and what the fill decided for it."""

    item: HistoryItem
    messages: tuple[ChatMessage, ...]
    tokens: int
    included: bool = False
    reason: str | None = None
    cut: Cut | None = None


@dataclass(slots=True)
class _State:
    free: int
    costs: dict[ContextSource, int] = field(default_factory=dict)


class ContextAssembler:
    """Builds the messages of one request and its ``ContextAssembled`` trace."""

    def __init__(
        self,
        tokenizer: Tokenizer,
        budget: Budget,
        *,
        quotas: Quotas | None = None,
        tool_tokens: int = 0,
    ):
        self.tokenizer = tokenizer
        self.budget = budget
        self.quotas = quotas or Quotas()
        # The tool definitions sent beside the messages: paid by every request, inside the
        # budget, and traced as the system item ``tools``.
        self.tool_tokens = tool_tokens
        self._frames: dict[ContextSource, int] = {}
        self._counts: dict[str, int] = {}  # entry texts recur turn after turn (memories)

    def _count(self, text: str) -> int:
        count = self._counts.get(text)
        if count is None:
            if len(self._counts) >= COUNT_CACHE_SIZE:
                self._counts.clear()
            count = self._counts[text] = self.tokenizer.count(text)
        return count

    def assemble(self, inp: AssemblyInput) -> Assembly:
        tok = self.tokenizer
        budget = self.budget.budget
        system = system_text(inp.system_prompt, inp.instructions)
        system_cost = message_cost(tok, ChatMessage(role="system", content=system))
        prompt_cost = message_cost(tok, ChatMessage(role="user", content=inp.prompt))
        required = tok.reply_overhead() + self.tool_tokens + system_cost + prompt_cost
        if required > budget:
            raise ContextOverflow(
                required, budget, window=self.budget.window, headroom=self.budget.headroom
            )
        state = _State(free=budget - required)

        memories = self._memory_entries(
            _most_relevant(inp.memories, inp.prompt, inp.memory_relevance), inp.prompt
        )
        ranked = [e for e in memories if e.reason is None]
        ranked.sort(key=lambda e: _relevance(e, inp.prompt, inp.memory_relevance))
        quota = self.quotas.tokens(ContextSource.MEMORY, budget)
        self._fill_block(ContextSource.MEMORY, memories, ranked, state, cap=quota, cut="never")

        summaries = [_slot(h) for h in inp.history if h.kind == "summary"]
        raw = [_slot(h) for h in inp.history if h.kind != "summary"]
        self._fill_summaries(summaries, memories, ranked, state)
        tail = [_slot(h) for h in inp.tail]
        self._fill_slots(tail, state)
        if tail and not tail[-1].included:
            raise ContextOverflow(
                budget - state.free + tail[-1].tokens,
                budget,
                window=self.budget.window,
                headroom=self.budget.headroom,
            )
        split = max((i for i, s in enumerate(raw) if s.item.kind == "user"), default=0)
        latest_whole = self._fill_latest(raw[split:], state)

        room = state.costs.get(ContextSource.MEMORY, 0) + state.free
        self._fill_block(ContextSource.MEMORY, memories, ranked, state, cap=room, cut="any")
        outranked = [e for e in ranked if not e.included]
        for entry in outranked:
            entry.reason = OUTRANKED
        hit_groups: list[list[_Entry]] = []
        for source, hits in (
            (ContextSource.WORKSPACE, inp.workspace_hits),
            (ContextSource.KNOWLEDGE_BASE, inp.kb_hits),
            (ContextSource.RECALL, inp.recall_hits),
        ):
            # One floor for every source: recalled hits under it are traced, left out.
            entries = self._hit_entries(source, hits, inp.relevance_floor)
            cap = self.quotas.tokens(source, budget)
            self._fill_block(source, entries, [e for e in entries if e.reason is None], state, cap)
            hit_groups.append(entries)
        if latest_whole and not outranked:  # approved memory beats old history
            self._fill_exchanges(raw[:split], state)
        else:
            for slot in raw[:split]:
                slot.reason = OLDER_THAN_CUT

        plan = Plan(
            system=system,
            memories=tuple(e.text for e in memories if e.included),
            workspace=tuple(e.text for e in hit_groups[0] if e.included),
            knowledge_base=tuple(e.text for e in hit_groups[1] if e.included),
            summary=tuple(m for s in summaries if s.included for m in s.messages),
            history=tuple(m for s in raw if s.included for m in s.messages),
            prompt=inp.prompt,
            tail=tuple(m for s in tail if s.included for m in s.messages),
            recall=tuple(e.text for e in hit_groups[2] if e.included),
        )
        messages = render(plan)
        by_source = {source: 0 for source in ContextSource}
        by_source[ContextSource.SYSTEM] = system_cost + tok.reply_overhead() + self.tool_tokens
        by_source[ContextSource.PROMPT] = prompt_cost
        for source in (
            ContextSource.MEMORY,
            ContextSource.WORKSPACE,
            ContextSource.KNOWLEDGE_BASE,
            ContextSource.RECALL,
        ):
            by_source[source] = state.costs.get(source, 0)
        for slot in (*summaries, *raw, *tail):
            if slot.included:
                by_source[slot.item.source] += slot.tokens
        used = sum(by_source.values())
        items = self._trace_items(
            inp, system_cost, prompt_cost, memories, hit_groups, [*summaries, *raw], tail
        )
        retrieved = {e.ref: e.text for group in hit_groups for e in group if e.included}
        trace = ContextAssembled(
            turn=inp.turn,
            model=inp.model,
            tokenizer=tok.name,
            estimated=tok.estimated,
            window=self.budget.window,
            headroom=self.budget.headroom,
            budget=budget,
            used=used,
            by_source=by_source,
            items=items,
            system_prompt=system,
            retrieval_errors=tuple(inp.retrieval_errors),
            retrieval_notes=tuple(inp.retrieval_notes),
            retrieved=retrieved,
            relevance_floor=inp.relevance_floor,
        )
        return Assembly(messages=messages, trace=trace, plan=plan)

    # -- data blocks ------------------------------------------------------------------------

    def _memory_entries(self, memories: Sequence[MemoryRecord], prompt: str) -> list[_Entry]:
        entries: list[_Entry] = []
        for memory in memories:
            text = memory_entry(memory.scope, memory.key, memory_body(memory.body))
            name = f"{memory.scope.value}:{memory.key}" if memory.key else memory.scope.value
            entry = _Entry(
                ref=f"mem:{memory.id}@v{memory.version}",
                source=ContextSource.MEMORY,
                text=text,
                cost=self._count(text) + 1,
                source_name=name,
                memory=memory,
            )
            if memory.status is not MemoryStatus.ACCEPTED:
                entry.reason = NOT_ACCEPTED
            entries.append(entry)
        return entries

    def _hit_entries(
        self, source: ContextSource, hits: Sequence[RetrievalHit], floor: float
    ) -> list[_Entry]:
        entries: list[_Entry] = []
        seen: set[str] = set()
        for hit in hits:
            text = hit_entry(hit, escape_data(hit.text))
            entry = _Entry(
                ref=hit_ref(hit),
                source=source,
                text=text,
                cost=self._count(text) + 1,
                source_name=hit.source,
                hit=hit,
            )
            if entry.ref in seen:
                entry.reason = DUPLICATE
            elif hit.score < floor:
                entry.reason = BELOW_FLOOR
            seen.add(entry.ref)
            entries.append(entry)
        return entries

    def _frame(self, source: ContextSource) -> int:
        """What a block costs with no entries: message overhead, tags and the note."""
        if source not in self._frames:
            empty = ChatMessage(role="system", content=block_text(source, []))
            self._frames[source] = message_cost(self.tokenizer, empty)
        return self._frames[source]

    def _block_cost(self, source: ContextSource, entries: Sequence[_Entry]) -> int:
        texts = [e.text for e in entries if e.included]
        if not texts:
            return 0
        message = ChatMessage(role="system", content=block_text(source, texts))
        return message_cost(self.tokenizer, message)

    def _fill_block(
        self,
        source: ContextSource,
        entries: list[_Entry],
        ranked: list[_Entry],
        state: _State,
        cap: int,
        *,
        cut: Literal["never", "too_large", "any"] = "too_large",
    ) -> None:
        """Add ``ranked`` entries not yet in while the whole block costs at most ``cap``. An entry
        that does not fit is cut to the room left: never, only when it is too large for the whole
        cap, or always (``any``). ``entries`` is the render order. Entries already in stay in (a
        second call grows the block)."""
        before = state.costs.get(source, 0)
        cap = min(cap, before + state.free)
        reason = OVER_QUOTA.format(source.value.replace("_", " "))
        frame = self._frame(source)
        used = before or frame
        for entry in ranked:
            if entry.included:
                continue
            fits = used + entry.cost <= cap
            too_large = frame + entry.cost > cap  # for the whole cap: cut it to the room left
            may_cut = cut == "any" or (cut == "too_large" and too_large)
            if fits or (may_cut and self._cut_entry(entry, cap - used)):
                entry.included, entry.reason = True, None
                used += entry.cost
            else:
                entry.reason = reason
        exact = self._block_cost(source, entries)
        while exact > cap:  # counts are not additive inside one message: trust only the total
            last = next(e for e in reversed(ranked) if e.included)
            last.included, last.reason = False, reason
            exact = self._block_cost(source, entries)
        state.costs[source] = exact
        state.free -= exact - before

    def _cut_entry(self, entry: _Entry, room: int) -> bool:
        """Cut the entry's body so the entry costs at most ``room``; False if too little is left."""
        tok = self.tokenizer
        if entry.memory is not None:
            memory = entry.memory
            head = memory_entry(memory.scope, memory.key, "")
            fitted = fit_text(tok, memory_body(memory.body), room - tok.count(head) - 2)
            text = memory_entry(memory.scope, memory.key, fitted.text) if fitted else ""
        else:
            assert entry.hit is not None
            frame = hit_entry(entry.hit, "")
            fitted = fit_text(tok, escape_data(entry.hit.text), room - tok.count(frame) - 3)
            text = hit_entry(entry.hit, fitted.text) if fitted else ""
        if fitted is None or (cost := tok.count(text) + 1) > room:
            return False
        entry.text, entry.cost, entry.cut = text, cost, fitted.cut
        return True

    # -- history ----------------------------------------------------------------------------

    def _fill_summaries(
        self, slots: list[_Slot], memories: list[_Entry], ranked: list[_Entry], state: _State
    ) -> None:
        """The newest summary stands for history that is no longer there, so it goes in (cut if it
        must be); when not even a cut fits, memories give way, least relevant first."""
        if not slots:
            return
        newest = slots[-1]
        while not self._fill_slots([newest], state):
            newest.included, newest.reason, newest.cut = False, None, None
            newest.messages, newest.tokens = newest.item.messages, newest.item.tokens
            last = next((e for e in reversed(ranked) if e.included), None)
            if last is None:
                newest.reason = DOES_NOT_FIT
                break
            last.included, last.reason = False, OUTRANKED
            exact = self._block_cost(ContextSource.MEMORY, memories)
            state.free += state.costs.get(ContextSource.MEMORY, 0) - exact
            state.costs[ContextSource.MEMORY] = exact
        if newest.included:
            self._fill_slots(slots[:-1], state)
        else:
            for slot in slots[:-1]:
                slot.reason = OLDER_THAN_CUT

    def _fill_slots(self, slots: list[_Slot], state: _State) -> bool:
        """Newest first while items fit; the item at the cut is cut to the room left, and every
        older one is left out. True when every item went in whole or cut."""
        for index in range(len(slots) - 1, -1, -1):
            slot = slots[index]
            if slot.tokens <= state.free:
                slot.included = True
                state.free -= slot.tokens
                continue
            if self._cut_slot(slot, state.free):
                state.free -= slot.tokens
            else:
                slot.reason = DOES_NOT_FIT
            for older in slots[:index]:
                older.reason = OLDER_THAN_CUT
            return slot.included and index == 0
        return True

    def _fill_latest(self, slots: list[_Slot], state: _State) -> bool:
        """The latest exchange, newest first and cut where it must be, but its prompt is held
        ahead of what answered it: kept history never begins with a reply or a tool result
        whose prompt was dropped. True when every item went in (whole or cut)."""
        head = slots[0] if slots else None
        if head is None or head.item.kind != "user" or len(slots) == 1:
            return self._fill_slots(slots, state)
        if head.tokens > state.free:
            return self._fill_slots(slots, state)
        state.free -= head.tokens
        head.included = True
        return self._fill_slots(slots[1:], state)

    def _fill_exchanges(self, slots: list[_Slot], state: _State) -> None:
        """Older history by whole exchanges (a user message and what answered it), newest first:
        the first exchange that does not fit whole ends the history. No message is cut at the
        history cut, and kept history never begins with a reply whose prompt was dropped."""
        starts = sorted({0, *(i for i, s in enumerate(slots) if s.item.kind == "user")})
        exchanges = [slots[a:b] for a, b in zip(starts, [*starts[1:], len(slots)], strict=True)]
        for index in range(len(exchanges) - 1, -1, -1):
            exchange = exchanges[index]
            cost = sum(s.tokens for s in exchange)
            if cost <= state.free:
                for slot in exchange:
                    slot.included = True
                state.free -= cost
                continue
            for slot in exchange:
                slot.reason = DOES_NOT_FIT
            for older in exchanges[:index]:
                for slot in older:
                    slot.reason = OLDER_THAN_CUT
            return

    def _cut_slot(self, slot: _Slot, room: int) -> bool:
        """Cut the item's last message (a tool result, never the call) to fit ``room``."""
        tok = self.tokenizer
        item = slot.item
        last = item.messages[-1]
        fixed = sum(message_cost(tok, m) for m in item.messages[:-1])
        fixed += tok.message_overhead(last)
        fitted = fit_text(tok, last.content, room - fixed, total=item.tokens - fixed)
        if fitted is None or fixed + fitted.tokens > room:
            return False
        slot.cut = fitted.cut
        slot.messages = cut_messages(tok, item.messages, fitted.cut)
        slot.tokens = fixed + fitted.tokens
        slot.included = True
        return True

    # -- trace ------------------------------------------------------------------------------

    def _trace_items(
        self,
        inp: AssemblyInput,
        system_cost: int,
        prompt_cost: int,
        memories: list[_Entry],
        hit_groups: list[list[_Entry]],
        slots: list[_Slot],
        tail: list[_Slot],
    ) -> tuple[TraceItem, ...]:
        items = [
            TraceItem(source=ContextSource.SYSTEM, ref="system", tokens=system_cost, included=True)
        ]
        if self.tool_tokens:
            items.append(
                TraceItem(
                    source=ContextSource.SYSTEM,
                    ref=TOOLS_REF,
                    tokens=self.tool_tokens,
                    included=True,
                )
            )
        for entry in [*memories, *(e for group in hit_groups for e in group)]:
            items.append(
                TraceItem(
                    source=entry.source,
                    ref=entry.ref,
                    tokens=entry.cost,
                    included=entry.included,
                    reason=None if entry.included else entry.reason,
                    truncated=entry.cut is not None and entry.included,
                    source_name=entry.source_name,
                    kept_tokens=entry.cut.kept if entry.cut and entry.included else None,
                    dropped_tokens=entry.cut.dropped if entry.cut and entry.included else None,
                    untrusted_inputs=(
                        entry.memory.untrusted_inputs
                        if entry.memory is not None and entry.memory.carries_taint
                        else ()
                    ),
                )
            )
        items.extend(_slot_item(slot) for slot in slots)
        prompt_ref = f"seq:{inp.prompt_seq}" if inp.prompt_seq is not None else "prompt"
        items.append(
            TraceItem(
                source=ContextSource.PROMPT, ref=prompt_ref, tokens=prompt_cost, included=True
            )
        )
        items.extend(_slot_item(slot) for slot in tail)  # after the prompt: replay keeps order
        return tuple(items)


def _slot(item: HistoryItem) -> _Slot:
    return _Slot(item=item, messages=item.messages, tokens=item.tokens)


_SLOT_ITEMS: dict[tuple[object, ...], TraceItem] = {}
SLOT_ITEMS_SIZE = 16_384


def _slot_item(slot: _Slot) -> TraceItem:
    """The trace item of a history slot. Every turn traces the same few hundred items again, so
    each is built once (an immutable value, keyed by everything it holds) and reused."""
    item = slot.item
    cut = slot.cut if slot.included else None
    reason = None if slot.included else slot.reason
    key = (item.seq, item.kind, item.untrusted, slot.tokens, slot.included, reason, cut)
    found = _SLOT_ITEMS.get(key)
    if found is not None:
        return found
    if len(_SLOT_ITEMS) >= SLOT_ITEMS_SIZE:
        _SLOT_ITEMS.clear()
    # Built without re-validating fields that are typed here.
    found = _SLOT_ITEMS[key] = TraceItem.model_construct(
        source=item.source,
        ref=item.ref,
        tokens=slot.tokens,
        included=slot.included,
        reason=reason,
        truncated=cut is not None,
        source_name=item.kind,
        kept_tokens=cut.kept if cut else None,
        dropped_tokens=cut.dropped if cut else None,
        untrusted_inputs=item.untrusted,
    )
    return found


def _relevance(
    entry: _Entry, prompt: str, scores: Mapping[str, float]
) -> tuple[float, int, float, str]:
    memory = entry.memory
    assert memory is not None
    return _memory_rank(memory, prompt, scores, entry.ref)


def _most_relevant(
    memories: Sequence[MemoryRecord], prompt: str, scores: Mapping[str, float]
) -> Sequence[MemoryRecord]:
    """The ``TURN_MEMORIES`` most relevant of ``memories``, in their order."""
    if len(memories) <= TURN_MEMORIES:
        return memories
    best = sorted(
        memories, key=lambda m: _memory_rank(m, prompt, scores, f"mem:{m.id}@v{m.version}")
    )
    kept = {m.id for m in best[:TURN_MEMORIES]}
    return [m for m in memories if m.id in kept]


def _memory_rank(
    memory: MemoryRecord, prompt: str, scores: Mapping[str, float], ref: str
) -> tuple[float, int, float, str]:
    """The memory search's score for the prompt first, then a key match with the prompt, then
    a body match, then the most recently updated."""
    score = scores.get(memory.id, 0.0)
    asked = _terms(prompt)
    if memory.key and asked & _terms(memory.key):
        tier = 0
    elif asked & _terms(memory.body):
        tier = 1
    else:
        tier = 2
    return -score, tier, -memory.updated_at.timestamp(), ref


def _terms(text: str) -> set[str]:
    """The words that say what a text is about: three letters or more, or CJK bigrams."""
    return {w for w in words(text) if len(w) >= 3 or is_ngram(w)}
