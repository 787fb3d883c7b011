"""Inline memory proposal cards: scope, key, body, the value it replaces, and provenance.

A card is focusable; while it is pending ``a`` approves, ``r`` rejects and ``e`` edits the body
before approving. A decided card offers none of them (the memory browser edits accepted memories),
except that a session memory accepted with its taint offers ``f`` to forget it. Once a decision is
sent (it runs in the background) the card takes no key: what was typed with it, fast or pasted,
belongs to the message input. Any other typing on a card is handed to the input, in order, by the
screen's ``KeyHandler`` (or a ``Typed`` message without one), so nothing typed is lost.
It renders the record it was last given, and the app re-reads that record through the facade
whenever the log says the memory changed (here or in another process).
"""

from __future__ import annotations

from typing import ClassVar, Literal, Protocol, runtime_checkable

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Static

from kairox.core.events import MemoryProposed
from kairox.core.records import MemoryRecord
from kairox.core.terminal import visible
from kairox.core.types import MemoryStatus

Action = Literal["approve", "reject", "edit", "forget"]
MAX_REFS = 3
CARD_KEYS: dict[str, Action] = {"a": "approve", "r": "reject", "e": "edit"}
TYPING_KEYS = frozenset({"enter", "backspace"})


@runtime_checkable
class KeyHandler(Protocol):
    """A screen that types the keys a card hands over into its message input at once, in the
    order the card received them (a message would let later keys overtake them)."""

    async def type_into_prompt(self, key: str, character: str | None) -> None: ...

    def focus_prompt(self) -> None: ...


def card_text(proposal: MemoryProposed, record: MemoryRecord) -> Text:
    text = Text()
    text.append(visible(record.body), style="bold")
    if proposal.replaces_body is not None:
        text.append("\nreplaces: ", style="dim")
        text.append(visible(proposal.replaces_body), style="dim strike")
    if proposal.untrusted_inputs:
        refs = ", ".join(f"{u.kind} {u.ref}" for u in proposal.untrusted_inputs[:MAX_REFS])
        refs = visible(refs, one_line=True)
        more = len(proposal.untrusted_inputs) - MAX_REFS
        if more > 0:
            refs += f" and {more} more"
        text.append("\n⚠ proposed after untrusted input: ", style="bold yellow")
        text.append(refs, style="yellow")
    text.append("\n")
    match record.status:
        case MemoryStatus.PENDING:
            text.append("a approve · r reject · e edit & approve", style="italic")
        case MemoryStatus.ACCEPTED if record.carries_taint:
            text.append("accepted for this session with its taint · ", style="yellow")
            text.append("f forget", style="italic")
        case MemoryStatus.ACCEPTED:
            who = record.decided_by.value if record.decided_by else "policy"
            edited = " (edited)" if record.body != proposal.body else ""
            text.append(f"accepted by {who}{edited}", style="green")
        case MemoryStatus.REJECTED:
            who = record.decided_by.value if record.decided_by else "user"
            reason = record.decision_reason
            said = f": {reason}" if reason and reason != f"rejected by the {who}" else ""
            text.append(f"rejected by {who}{said}", style="red")
        case MemoryStatus.DELETED:
            text.append("deleted", style="red")
    return text


class ProposalCard(Static, can_focus=True):
    """One proposal of a turn, under the reply that made it."""

    DEFAULT_CSS = """
    ProposalCard {
        border: round $secondary;
        padding: 0 1;
        margin: 0 0 0 2;
        height: auto;
    }
    ProposalCard.-pending { border: round $warning; }
    ProposalCard.-accepted { border: round $success; }
    ProposalCard.-rejected, ProposalCard.-deleted { border: round $error 60%; }
    ProposalCard:focus { border: heavy $accent; background: $boost; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "decide('approve')", "Approve"),
        Binding("r", "decide('reject')", "Reject"),
        Binding("e", "decide('edit')", "Edit"),
        Binding("f", "decide('forget')", "Forget"),
    ]

    class Decision(Message):
        """The user pressed a decision key on a card."""

        def __init__(self, card: ProposalCard, action: Action) -> None:
            super().__init__()
            self.card = card
            self.action = action

    class Typed(Message):
        """A key typed on the card that is not one of its keys: it belongs to the input."""

        def __init__(self, card: ProposalCard, key: str, character: str | None) -> None:
            super().__init__()
            self.card = card
            self.key = key
            self.character = character

    def __init__(self, proposal: MemoryProposed, record: MemoryRecord) -> None:
        super().__init__(markup=False)
        self.proposal = proposal
        self.record = record
        self.sent = False
        """A decision was sent and not yet shown: the card takes no key meanwhile."""

    @property
    def memory_id(self) -> str:
        return self.proposal.memory_id

    def concerns(self, memory_ids: set[str]) -> bool:
        """Whether a change to any of ``memory_ids`` may change this card."""
        return bool({self.proposal.memory_id, self.record.id} & memory_ids)

    def on_mount(self) -> None:
        self.show_record(self.record)

    def show_record(self, record: MemoryRecord) -> None:
        self.record = record
        self.sent = False
        self.refresh_bindings()
        self.border_title = f"memory · {record.scope.value} · {record.key or '-'}"
        self.border_subtitle = record.status.value
        for status in MemoryStatus:
            self.set_class(record.status is status, f"-{status.value}")
        self.update(card_text(self.proposal, record))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """a/r/e exist only while the proposal is pending, f only on a memory accepted with its
        taint (hidden from the footer otherwise)."""
        if action == "decide" and parameters == ("forget",):
            return self.record.status is MemoryStatus.ACCEPTED and self.record.carries_taint
        if action == "decide":
            return self.record.status is MemoryStatus.PENDING
        return True

    async def on_key(self, event: events.Key) -> None:
        # A key would reach its binding (in the app, through the focus of that moment) only
        # after the keys typed with it were read here: the card decides on the key itself, and
        # takes no key after it.
        if not self.sent:
            action = (
                CARD_KEYS.get(event.key) if self.record.status is MemoryStatus.PENDING else None
            )
            if action is None and event.key == "f" and self.check_action("decide", ("forget",)):
                action = "forget"  # forgets a session memory accepted with its taint
            if action is not None:
                event.stop()
                event.prevent_default()
                self.action_decide(action)
                return
        if event.is_printable or event.key in TYPING_KEYS:
            event.stop()
            event.prevent_default()
            character = event.character if event.is_printable else None
            screen = self.screen
            if isinstance(screen, KeyHandler):
                await screen.type_into_prompt(event.key, character)
                # Focus moves once the keys already queued here are typed, so none overtakes.
                self.call_later(screen.focus_prompt)
            else:
                self.post_message(self.Typed(self, event.key, character))

    def action_decide(self, action: Action) -> None:
        self.sent = True
        self.post_message(self.Decision(self, action))

    def reopen(self) -> None:
        """The decision failed or its edit was cancelled: the card takes its keys again."""
        self.sent = False
