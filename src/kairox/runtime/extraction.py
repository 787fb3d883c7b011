"""Running the extraction call (``kairox.memory.extraction``) and routing what it proposes.

The same path serves ``[memory] extract = "after_turn"`` (after a completed turn, in the session
actor) and ``facade.memory.extract`` (a conversation from a caller without a turn). Its markers
go through the approval service like a reply's, recorded with ``origin: extraction``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from kairox.core.aio import blocking, shielded
from kairox.core.errors import ModelError
from kairox.core.events import (
    EventPayload,
    MemoryExtractionFailed,
    ModelCallStarted,
    UntrustedInput,
)
from kairox.core.messages import ChatMessage
from kairox.core.outcomes import TurnOutcome
from kairox.core.records import MemoryView
from kairox.core.types import MemoryOrigin, MemoryStatus
from kairox.memory.extraction import (
    EXTRACTION_GRAMMAR,
    extraction_messages,
    known_taint,
    parse_extraction,
)
from kairox.memory.markers import MemoryMarker
from kairox.memory.service import MemoryPolicy, Proposal, Routed
from kairox.models import ModelProvider, ModelRequest, collect
from kairox.runtime.turn import Turn, one_line_reason
from kairox.services import Services

EXTRACT_MAX_TOKENS = 256


@dataclass(frozen=True)
class Extraction:
    """One extraction: the conversation, who it belongs to, and what taints it."""

    conversation: tuple[ChatMessage, ...]
    workspace_id: str
    session_id: str | None
    turn: int | None = None
    call_index: int = 0
    untrusted: tuple[UntrustedInput, ...] = ()


async def extraction_markers(
    provider: ModelProvider, services: Services, job: Extraction
) -> tuple[list[MemoryMarker], tuple[UntrustedInput, ...]]:
    """Make the call and parse its markers; a failed call raises ``ModelError``. Also returns
    the taint of the memories the call was shown (``known_taint``)."""
    view = MemoryView(workspace_id=job.workspace_id, session_id=job.session_id)
    known = await blocking(
        services.memories.list, view, statuses=[MemoryStatus.ACCEPTED, MemoryStatus.PENDING]
    )
    request = ModelRequest(
        messages=extraction_messages(job.conversation, known),
        session_id=job.session_id or "",
        call_index=job.call_index,
        max_tokens=EXTRACT_MAX_TOKENS,
        temperature=0.0,
        purpose="extraction",
        grammar=EXTRACTION_GRAMMAR,
    )
    reply = await collect(provider.stream(request))
    if reply.failure is not None:
        raise ModelError(provider.spec, reply.failure.reason)
    markers = parse_extraction(reply.text, session=job.session_id is not None).markers
    return markers, known_taint(known)


async def route_extracted(
    services: Services, job: Extraction, markers: Sequence[MemoryMarker], policy: MemoryPolicy
) -> list[Routed]:
    """Route the markers through approval: the same policy, taint and per-turn cap as a
    reply's, each recorded with ``origin: extraction``."""
    if not markers:
        return []
    return await shielded(
        services.approval.route,
        [
            Proposal(
                scope=m.scope,
                key=m.key,
                body=m.body,
                untrusted=job.untrusted,
                origin=MemoryOrigin.EXTRACTION,
            )
            for m in markers
        ],
        workspace_id=job.workspace_id,
        session_id=job.session_id,
        turn=job.turn,
        policy=policy,
    )


async def extract(
    provider: ModelProvider, services: Services, job: Extraction, policy: MemoryPolicy
) -> list[Routed]:
    markers, shown = await extraction_markers(provider, services, job)
    tainted = replace(job, untrusted=tuple(dict.fromkeys((*job.untrusted, *shown))))
    return await route_extracted(services, tainted, markers, policy)


async def after_turn(turn: Turn, prompt: str, outcome: TurnOutcome) -> TurnOutcome:
    """``[memory] extract = "after_turn"``: one extraction call over the completed exchange, with
    the turn's taint and cap; its proposals join the outcome's. A failure is recorded as
    ``MemoryExtractionFailed`` and the turn stands."""
    deps = turn.d
    services = deps.services

    async def append(payload: EventPayload) -> None:
        await shielded(
            services.events.append,
            payload,
            session_id=deps.session_id,
            workspace_id=deps.workspace_id,
            counter=deps.tokenizer,
        )

    try:
        call_index = await blocking(
            services.events.count,
            session_id=deps.session_id,
            types=["ModelCallStarted"],
            where_json=("purpose", "extraction"),
        )
        await append(
            ModelCallStarted(
                turn=outcome.turn,
                purpose="extraction",
                model=deps.provider.spec,
                call_index=call_index,
            )
        )
        job = Extraction(
            conversation=(
                ChatMessage(role="user", content=prompt),
                ChatMessage(role="assistant", content=outcome.reply),
            ),
            workspace_id=deps.workspace_id,
            session_id=deps.session_id,
            turn=outcome.turn,
            call_index=call_index,
            untrusted=tuple(turn.untrusted),
        )
        routed = await extract(deps.provider, services, job, deps.policy)
    except Exception as exc:
        await append(MemoryExtractionFailed(turn=outcome.turn, reason=one_line_reason(exc)))
        return outcome
    outcome.proposals.extend(r.record for r in routed if not r.duplicate)
    outcome.duplicates.extend(r.record for r in routed if r.duplicate)
    return outcome
