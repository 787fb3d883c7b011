"""The memory browser: the workspace's, the user's and the session's memories, with filter, edit,
delete, history and undo.

Every listing is read through the facade; the app calls ``reload`` when the log says a memory
changed, so edits from another process show up here without a restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from kairox.core.records import MemoryRecord, version_label
from kairox.core.terminal import visible
from kairox.core.types import MemoryScope, MemoryStatus
from kairox.tui.dialogs import EditBodyScreen, HistoryScreen
from kairox.tui.notices import NoticeBar

if TYPE_CHECKING:
    from kairox.app import AppFacade

STATUS_FILTERS: tuple[MemoryStatus | None, ...] = (None, *MemoryStatus)
_SCOPE_ORDER = {MemoryScope.USER: 0, MemoryScope.WORKSPACE: 1, MemoryScope.SESSION: 2}
BODY_WIDTH = 60


def _sort_key(record: MemoryRecord) -> tuple[int, str, str, str]:
    return (_SCOPE_ORDER[record.scope], record.key or "", record.body, record.id)


def _cell(text: str, width: int) -> str:
    flat = visible(" ".join(text.split()), one_line=True)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


class MemoryBrowserScreen(Screen[None]):
    DEFAULT_CSS = """
    MemoryBrowserScreen #browser-title { height: 1; padding: 0 1; background: $primary 30%; }
    MemoryBrowserScreen #filter { margin: 0 1; }
    MemoryBrowserScreen DataTable { height: 1fr; margin: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("slash", "focus_filter", "Filter"),
        Binding("s", "cycle_status", "Status"),
        Binding("a", "approve", "Approve"),
        Binding("r", "reject", "Reject"),
        Binding("e", "edit", "Edit"),
        Binding("d", "delete", "Delete"),
        Binding("u", "undo", "Undo"),
        Binding("h", "history", "History"),
    ]

    def __init__(self, facade: AppFacade, *, workspace: Path, session: str | None) -> None:
        super().__init__()
        self.facade = facade
        self.workspace = workspace
        self.session = session
        self.status_filter: MemoryStatus | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="browser-title", markup=False)
        yield Input(placeholder="filter by key or body (enter to search)", id="filter")
        yield DataTable(id="memories", cursor_type="row", zebra_stripes=True)
        yield NoticeBar(id="browser-notice")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("scope", width=9)
        table.add_column("status", width=8)
        table.add_column("key", width=24)
        table.add_column("body", width=BODY_WIDTH)
        table.add_column("v", width=3)
        self._title()
        table.focus()
        self.schedule_reload()

    def _title(self) -> None:
        status = self.status_filter.value if self.status_filter else "all"
        who = f" + session {self.session}" if self.session else ""
        self.query_one("#browser-title", Static).update(
            f"Memories · user + workspace{who} · status: {status}"
        )

    @property
    def notice(self) -> NoticeBar:
        return self.query_one("#browser-notice", NoticeBar)

    def schedule_reload(self) -> None:
        self.run_worker(self.reload(), group="reload", exclusive=True, exit_on_error=False)

    async def reload(self) -> None:
        """Re-read the listing through the facade, keeping the cursor on the same memory."""
        text = self.query_one("#filter", Input).value.strip() or None
        try:
            records = await self.facade.memory.list(
                workspace=self.workspace,
                session=self.session,
                statuses=[self.status_filter] if self.status_filter else None,
                text=text,
            )
        except Exception as exc:
            self.notice.error(exc)
            return
        table = self.query_one(DataTable)
        selected = self.selected_id()
        table.clear()
        for r in sorted(records, key=_sort_key):
            table.add_row(
                r.scope.value,
                r.status.value,
                _cell(r.key or "-", 24),
                _cell(r.body, BODY_WIDTH),
                version_label(r.version, r.status),
                key=r.id,
            )
        if selected is not None and selected in table.rows:
            table.move_cursor(row=table.get_row_index(selected))
        if not records:
            self.notice.show("no memories match")
        elif self.notice.text == "no memories match":
            self.notice.clear()

    def rows(self) -> list[tuple[str, ...]]:
        """The visible rows as text, top to bottom."""
        table = self.query_one(DataTable)
        return [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]

    def selected_id(self) -> str | None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return str(key) if key is not None else None

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.schedule_reload()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            self.query_one(DataTable).focus()

    def action_back(self) -> None:
        self.dismiss(None)

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_cycle_status(self) -> None:
        index = STATUS_FILTERS.index(self.status_filter)
        self.status_filter = STATUS_FILTERS[(index + 1) % len(STATUS_FILTERS)]
        self._title()
        self.schedule_reload()

    @work(group="change", exit_on_error=False)
    async def action_edit(self) -> None:
        memory_id = self.selected_id()
        if memory_id is None:
            return
        try:
            record = await self.facade.memory.show(memory_id)
            title = f"Edit {record.scope.value} memory {record.key or '-'}"
            body = await self.app.push_screen_wait(EditBodyScreen(title, record.body))
            if body is None:
                return
            await self.facade.memory.edit(memory_id, body)
        except Exception as exc:
            self.notice.error(exc)
            return
        self.notice.show("memory edited")
        await self.reload()

    @work(group="change", exit_on_error=False)
    async def action_history(self) -> None:
        memory_id = self.selected_id()
        if memory_id is None:
            return
        try:
            record = await self.facade.memory.show(memory_id)
            versions = await self.facade.memory.history(memory_id)
        except Exception as exc:
            self.notice.error(exc)
            return
        title = f"History of {record.scope.value} memory {record.key or '-'}"
        await self.app.push_screen_wait(HistoryScreen(title, versions))

    async def _change(self, verb: str) -> None:
        memory_id = self.selected_id()
        if memory_id is None:
            return
        area = self.facade.memory
        try:
            if verb == "approved":
                await area.approve(memory_id)
            elif verb == "rejected":
                await area.reject(memory_id)
            elif verb == "deleted":
                await area.delete(memory_id)
            else:
                await area.undo(memory_id)
        except Exception as exc:
            self.notice.error(exc)
            return
        self.notice.show(f"memory {verb}")
        await self.reload()

    @work(group="change", exit_on_error=False)
    async def action_approve(self) -> None:
        await self._change("approved")

    @work(group="change", exit_on_error=False)
    async def action_reject(self) -> None:
        await self._change("rejected")

    @work(group="change", exit_on_error=False)
    async def action_delete(self) -> None:
        await self._change("deleted")

    @work(group="change", exit_on_error=False)
    async def action_undo(self) -> None:
        await self._change("undone")
