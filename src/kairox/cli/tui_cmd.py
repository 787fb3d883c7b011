"""``kairox chat``: the terminal UI. Textual is imported only when the command runs."""

from __future__ import annotations

from pathlib import Path

from kairox.app import AppFacade
from kairox.cli.main import (
    Context,
    cli,
    model_option,
    pass_ctx,
    profile_option,
    session_option,
    workspace_option,
)


@cli.command()
@workspace_option
@session_option
@profile_option
@model_option
@pass_ctx
def chat(
    ctx: Context, workspace: Path, session: str | None, profile: str | None, model: str | None
) -> None:
    """Chat in the terminal UI, with inline memory cards, a trace panel and a context meter."""
    from kairox.cli.chat_cmd import default_session_name
    from kairox.tui import ChatOptions, require_textual, run_chat

    require_textual()
    facade = AppFacade.open(ctx.home_arg, model=model)
    try:
        name = session or default_session_name(facade, workspace)
        run_chat(facade, ChatOptions(session=name, workspace=workspace.resolve(), profile=profile))
    finally:
        facade.close()


__all__ = ["chat"]
