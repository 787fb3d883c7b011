"""The chat screen: type a message, watch the reply stream in, decide proposals on inline cards.

Turns run in a Textual worker through ``facade.chat.run``, so the screen stays responsive. What the
turn writes reaches the screen one way only: the app follows the store's ordered event stream and
feeds each event to ``on_store_event`` (the user message, the streamed reply, tool lines, cards).
The screen holds no copy of memories or session state: cards and the status line are re-read
through the facade.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from kairox.app import LOADING_LABEL, waiting_label
from kairox.core.events import (
    AssistantMessageCompleted,
    CompactionSummary,
    ContextAssembled,
    MemoryProposed,
    ModelCallStarted,
    ModelTokenDelta,
    ProfileSwitched,
    StoredEvent,
    ToolInvocationCompleted,
    TurnFailed,
    UserMessageAdded,
)
from kairox.core.types import SessionState
from kairox.tui.cards import ProposalCard
from kairox.tui.chat_view import AssistantMessage, ChatView
from kairox.tui.dialogs import EditBodyScreen
from kairox.tui.meter import DEFAULT_THRESHOLD, ContextMeter
from kairox.tui.notices import NoticeBar, error_line
from kairox.tui.profile_picker import ProfilePicker
from kairox.tui.session_events import (
    MEMORY_EVENTS,
    QUEUED_COMPACTION,
    RUNNING_COMPACTION,
    compaction_notice,
    failure_line,
    memory_ids_of,
    model_line,
    profile_line,
    summary_line,
    tool_line,
)
from kairox.tui.trace import TracePanel

if TYPE_CHECKING:
    from kairox.app import AppFacade
    from kairox.tui import ChatOptions


def short_model(spec: str) -> str:
    """A model spec for the header: a file path (``local:``, ``scripted:``) by its file name."""
    kind, sep, argument = spec.partition(":")
    if sep and kind in ("local", "scripted") and "/" in argument:
        return f"{kind}:{argument.rsplit('/', 1)[-1]}"
    return spec


class ChatScreen(Screen[None]):
    DEFAULT_CSS = """
    ChatScreen #status { height: 1; padding: 0 1; background: $primary 30%; }
    ChatScreen #body { height: 1fr; }
    ChatScreen #prompt { margin: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "cycle_focus(1)", "Cards", key_display="Tab"),
        Binding("shift+tab", "cycle_focus(-1)", "Previous card", show=False),
        Binding("escape", "cancel_turn", "Cancel turn"),
        Binding("ctrl+t", "toggle_trace", "Trace"),
        Binding("ctrl+r", "context_items", "Context"),
        Binding("ctrl+o", "compact", "Compact"),
        Binding("ctrl+g", "pick_profile", "Profile"),
        Binding("ctrl+n", "memories", "Memories"),
        Binding("ctrl+b", "toggle_archive", "Archive", show=False),
    ]

    def __init__(self, facade: AppFacade, options: ChatOptions) -> None:
        super().__init__()
        self.facade = facade
        self.options = options
        self.session_id: str | None = None
        self.profile = options.profile or ""
        self.turn_running = False
        self.turns_finished = 0
        self.model: str | None = None
        self.model_loading = False
        self._cancel_requested = False
        self._reply: AssistantMessage | None = None  # the reply streaming in, if any

    # -- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="status", markup=False)
        with Horizontal(id="body"):
            yield ChatView(id="chat")
            yield TracePanel(id="trace")
        yield ContextMeter(id="meter")
        yield NoticeBar(id="notice")
        # no select-all on focus: coming back from a card must not put the draft under the cursor
        yield Input(
            placeholder="Type a message and press enter", id="prompt", select_on_focus=False
        )
        yield Footer()

    @property
    def chat(self) -> ChatView:
        return self.query_one(ChatView)

    @property
    def trace(self) -> TracePanel:
        return self.query_one(TracePanel)

    @property
    def meter(self) -> ContextMeter:
        return self.query_one(ContextMeter)

    @property
    def notice(self) -> NoticeBar:
        return self.query_one("#notice", NoticeBar)

    @property
    def prompt(self) -> Input:
        return self.query_one("#prompt", Input)

    def on_mount(self) -> None:
        self.prompt.focus()
        self.refresh_status()
        self.set_interval(0.25, self.refresh_status)
        self.run_worker(self._start(), group="start", exit_on_error=False)

    def _sid(self) -> str:
        """The open session's id; names are only unique within a workspace, so every call after
        the session opened goes by id."""
        if self.session_id is None:
            raise RuntimeError("the session is not open yet")
        return self.session_id

    def refresh_status(self) -> None:
        state = "not open"
        if self.session_id is not None:
            try:
                state = self.facade.chat.state(self.session_id).value.replace("_", " ")
                queued = self.facade.chat.queued(self.session_id)
                if queued:
                    state += f" · {queued} queued"
            except Exception as exc:
                state = error_line(exc)
        if self.model_loading and state == "idle":
            state = LOADING_LABEL
        profile = f" · profile {self.profile}" if self.profile else ""
        model = f" · model {short_model(self.model)}" if self.model else ""
        self.query_one("#status", Static).update(
            f"kairox · session {self.options.session} · {state}{profile}{model}"
        )

    # -- start-up -----------------------------------------------------------------------

    async def _start(self) -> None:
        try:
            threshold = await asyncio.to_thread(self._threshold)
        except Exception as exc:
            threshold = DEFAULT_THRESHOLD
            self.notice.error(exc)
        self.meter.threshold = threshold
        cursor = 0
        try:
            cursor = await self.facade.events.last_seq()
            if await self._ensure_open():
                await self._load_history(cursor)
            ignored = await asyncio.to_thread(self.facade.trust.notice, self.options.workspace)
            if ignored:
                self.notice.show(ignored, "warning")
        except Exception as exc:
            self.notice.error(exc)
        from kairox.tui.app import KairoxApp

        if isinstance(self.app, KairoxApp):
            self.app.follow(cursor)

    def _threshold(self) -> float:
        return self.facade.config(self.options.workspace).config.compaction.threshold

    async def _ensure_open(self) -> bool:
        if self.session_id is not None:
            return True
        try:
            info = await self.facade.chat.open(
                self.options.session, workspace=self.options.workspace, profile=self.options.profile
            )
        except Exception as exc:
            self.notice.error(exc)
            return False
        self.session_id = info.id
        self.profile = info.profile
        await self._show_model()
        self.run_worker(self._preload(), group="preload", exit_on_error=False)
        return True

    async def _show_model(self) -> None:
        try:
            self.model = await self.facade.chat.model(self._sid())
        except Exception as exc:
            self.notice.error(exc)
        self.refresh_status()

    async def _preload(self) -> None:
        """Load an embedded model now, so the first turn does not wait; it stays loaded."""
        self.model_loading = True
        self.refresh_status()
        try:
            await self.facade.chat.preload(self.options.workspace, self.profile or None)
        except Exception as exc:
            self.notice.error(exc)
        finally:
            self.model_loading = False
            self.refresh_status()

    async def _load_history(self, until: int) -> None:
        """The session up to ``until``; the app's follower delivers what comes after it. History
        takes the path live events take (``_show``), so a reload shows what the live view did."""
        events = await self.facade.events.list(session=self._sid(), until=until)
        for event in events:
            await self._show(event, live=False)
            self.trace.add(event)
        self._finish_reply()

    # -- sending ------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "prompt":
            return
        event.stop()
        text = event.value.strip()
        if not text:
            return
        if self.turn_running:
            self.notice.show("a turn is running (esc cancels it); your message is kept", "warning")
            return
        self.prompt.value = ""
        self.turn_running = True
        self._cancel_requested = False
        self.run_worker(self._run_turn(text), group="turn", exit_on_error=False)

    async def _run_turn(self, text: str) -> None:
        failure: str | None = None
        try:
            self.notice.clear()
            if not await self._ensure_open():
                failure = self.notice.text
                return
            outcome = await self.facade.chat.run(self._sid(), text)
            failure = outcome.failure
            await self._caught_up()
        except Exception as exc:
            failure = error_line(exc)
        finally:
            self.turn_running = False
            self.turns_finished += 1
            self._finish_reply(failure)
            if failure is not None:
                self._restore(text)
                if self._cancel_requested:
                    self.notice.show("turn cancelled", "warning")
                else:
                    self.notice.error(failure)
            self.refresh_status()

    async def _caught_up(self) -> None:
        """Wait until the app's follower has shown everything the turn wrote."""
        from kairox.tui.app import KairoxApp

        if isinstance(self.app, KairoxApp):
            await self.app.wait_followed(await self.facade.events.last_seq())

    def _finish_reply(self, failure: str | None = None) -> None:
        if self._reply is not None:
            self._reply.finish(failure)
            self._reply = None

    def _restore(self, text: str) -> None:
        """Put a failed message back so it is never lost (unless the user typed a new one)."""
        if not self.prompt.value.strip():
            self.prompt.value = text
            self.prompt.cursor_position = len(text)

    # -- live updates -------------------------------------------------------------------

    async def on_store_event(self, event: StoredEvent) -> None:
        """Called by the app for every new event in the log, from any process."""
        mine = self.session_id is not None and event.session_id == self.session_id
        cards: list[ProposalCard] = []
        if event.type in MEMORY_EVENTS:
            ids = memory_ids_of(event)
            cards = [card for card in self.chat.cards() if card.concerns(ids)]
            for card in cards:
                card.show_record(await self.facade.memory.show(card.memory_id))
        if mine or cards:
            self.trace.add(event)
        if mine:
            await self._show(event, live=True)

    async def _show(self, event: StoredEvent, *, live: bool) -> None:
        """Put one event of this session on the screen, from the history or as it happens; only
        a live event raises notices and a spinner."""
        payload = event.payload
        notice = compaction_notice(payload)
        if live and notice is not None:
            self.notice.show(*notice)
        line = model_line(payload)
        if line is not None and not isinstance(payload, AssistantMessageCompleted):
            await self.chat.add_line(line)
        match payload:
            case UserMessageAdded():
                self._finish_reply()
                await self.chat.add_user(payload.text)
                self._reply = await self.chat.start_reply()
            case ModelCallStarted() if payload.purpose == "reply" and live:
                if self._reply is None:
                    self._reply = await self.chat.start_reply()
                if not self._reply.text:
                    self._reply.wait(waiting_label(payload))
            case ModelTokenDelta():
                if self._reply is None:
                    self._reply = await self.chat.start_reply()
                self._reply.append(payload.text)
            case ToolInvocationCompleted():
                # The tool line goes between the text before the call and the text after it.
                if self._reply is not None and not self._reply.text:
                    await self._reply.remove()
                    self._reply = None
                self._finish_reply()
                await self.chat.add_line(tool_line(payload))
                self._reply = await self.chat.start_reply()
            case AssistantMessageCompleted():
                if self._reply is None:
                    await self.chat.add_reply(payload.text)
                self._finish_reply()
                if line is not None:  # the reply was cut: say so under it
                    await self.chat.add_line(line)
            case TurnFailed():
                self._finish_reply(payload.reason)
                await self.chat.add_line(failure_line(payload), error=True)
            case MemoryProposed():
                await self.chat.add_card(payload, await self.facade.memory.show(payload.memory_id))
            case ContextAssembled():
                self.meter.show_trace(payload)
            case CompactionSummary():
                await self.chat.add_line(summary_line(payload))
            case ProfileSwitched():
                await self.chat.add_line(profile_line(payload))
                if live:
                    self.profile = payload.to_profile
                    self.notice.show(f"profile switched to {payload.to_profile}")
                    await self._show_model()
            case _:
                pass

    # -- cards --------------------------------------------------------------------------

    def on_proposal_card_decision(self, message: ProposalCard.Decision) -> None:
        message.stop()
        self.run_worker(self._decide(message.card, message.action), exit_on_error=False)

    async def on_proposal_card_typed(self, message: ProposalCard.Typed) -> None:
        """A key that is not a card key, typed on a card, goes to the message input."""
        message.stop()
        await self.type_into_prompt(message.key, message.character)
        self.focus_prompt()

    async def type_into_prompt(self, key: str, character: str | None) -> None:
        """Type a key a card handed over into the message input (``cards.KeyHandler``)."""
        prompt = self.prompt
        if key == "enter":
            await prompt.action_submit()
        elif key == "backspace":
            prompt.action_delete_left()
        elif character is not None:
            prompt.insert_text_at_cursor(character)

    def focus_prompt(self) -> None:
        self.prompt.focus()

    async def _decide(self, card: ProposalCard, action: str) -> None:
        memory = self.facade.memory
        label = f"{card.record.scope.value} {card.record.key or '-'}"
        try:
            record = await memory.show(card.memory_id)
            if action == "approve":
                await memory.approve(card.memory_id)
                done = "approved"
            elif action == "reject":
                await memory.reject(card.memory_id)
                done = "rejected"
            elif action == "forget":
                await memory.delete(record.id)
                done = "forgotten"
            else:
                title = f"Edit {label} (the edit is approved)"
                body = await self.app.push_screen_wait(EditBodyScreen(title, record.body))
                if body is None:
                    card.reopen()
                    return
                if record.status.value == "pending":
                    await memory.approve(card.memory_id, body=body)
                    done = "edited and approved"
                else:
                    await memory.edit(record.id, body)
                    done = "edited"
            card.show_record(await memory.show(card.memory_id))
        except Exception as exc:
            card.reopen()
            self.notice.error(exc)
            return
        finally:
            if self.focused is card:
                self.prompt.focus()  # the next message is typed, never lost on a card
        self.notice.show(f"memory {done}: {label}")

    def action_cycle_focus(self, step: int) -> None:
        """Tab walks the cards (pending first from the prompt) and then back to the prompt."""
        cards = self.chat.cards()
        chain: list[Input | ProposalCard] = [*cards, self.prompt]
        focused = self.focused
        if focused in chain:
            index = chain.index(focused)
            target = chain[(index + step) % len(chain)]
        else:
            target = self.prompt
        if focused is self.prompt and step > 0 and cards:
            pending = [c for c in cards if c.record.status.value == "pending"]
            target = (pending or cards)[0]
        target.focus()
        if isinstance(target, ProposalCard):
            target.scroll_visible(animate=False)

    # -- shortcuts ----------------------------------------------------------------------

    def action_toggle_trace(self) -> None:
        self.trace.toggle_class("-open")

    def action_context_items(self) -> None:
        """Every item of the last turn's context, each expandable to the text the model saw."""
        from kairox.tui.context_items import ContextItemsScreen

        if self.session_id is None:
            self.notice.show("no turn yet: send a message first", "warning")
            return
        self.app.push_screen(ContextItemsScreen(self.facade, self.session_id))

    def action_cancel_turn(self) -> None:
        if not self.turn_running:
            self.prompt.focus()
            return
        self._cancel_requested = True
        self.notice.show("cancelling the turn…", "warning")
        self.run_worker(self._cancel(), exit_on_error=False)

    async def _cancel(self) -> None:
        try:
            if self.session_id is not None:
                await self.facade.chat.cancel(self.session_id)
        except Exception as exc:
            self.notice.error(exc)

    def action_compact(self) -> None:
        self.run_worker(self._compact(), group="compact", exit_on_error=False)

    async def _compact(self) -> None:
        try:
            if not await self._ensure_open():
                return
            sid = self._sid()
            busy = self.turn_running or self.facade.chat.state(sid) is not SessionState.IDLE
            future = self.facade.chat.compact_later(sid)
            self.notice.show(QUEUED_COMPACTION if busy else RUNNING_COMPACTION, "warning")
            self.refresh_status()
            await future
        except Exception as exc:
            self.notice.error(exc)
            return
        if self.notice.text in (QUEUED_COMPACTION, RUNNING_COMPACTION):
            self.notice.show("compaction finished")

    @work(group="profile", exit_on_error=False)
    async def action_pick_profile(self) -> None:
        try:
            if not await self._ensure_open():
                return
            config = (await asyncio.to_thread(self.facade.config, self.options.workspace)).config
            current = (await self.facade.sessions.get(self._sid())).profile
            profiles = [(alias, p.model) for alias, p in sorted(config.profiles.items())]
            alias = await self.app.push_screen_wait(ProfilePicker(profiles, current))
            if alias is None or alias == current:
                return
            if self.turn_running:
                self.notice.show(f"profile switch to {alias} queued behind the turn", "warning")
            info = await self.facade.chat.switch_profile(self._sid(), alias)
        except Exception as exc:
            self.notice.error(exc)
            return
        self.profile = info.profile
        self.notice.show(f"profile switched to {info.profile}")
        self.refresh_status()

    @work(group="archive", exit_on_error=False)
    async def action_toggle_archive(self) -> None:
        """Archive the session (its session memories are discarded), or unarchive it."""
        try:
            info = await self.facade.sessions.get(
                self.session_id or self.options.session, workspace=self.options.workspace
            )
            if info.archived:
                await self.facade.sessions.unarchive(info.id)
                self.notice.show(f"session {info.name} unarchived")
            else:
                await self.facade.sessions.archive(info.id)
                self.notice.show(
                    f"session {info.name} archived: session memories discarded; "
                    "ctrl+b to unarchive",
                    "warning",
                )
        except Exception as exc:
            self.notice.error(exc)

    def action_memories(self) -> None:
        from kairox.tui.memory_browser import MemoryBrowserScreen

        session = self.options.session if self.session_id is not None else None
        self.app.push_screen(
            MemoryBrowserScreen(self.facade, workspace=self.options.workspace, session=session)
        )
