"""An OpenAI Agents SDK agent whose conversation lives in a Kairox session.

Runs offline with the SDK's own scripted model; swap in a real one (``model="gpt-4o-mini"``)
and the rest stays the same. Run it from the workspace the memories belong to:

    pip install "kairox[openai-agents]"
    python examples/openai_agents_session.py
"""

import asyncio
import tempfile

from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message

from kairox import Memory
from kairox.integrations.openai_agents import KairoxSession
from kairox.memory import strip_memory_markers

set_tracing_disabled(True)  # the scripted model needs no trace export

model = ScriptedModel(
    [
        [
            assistant_message(
                'Noted! <memory scope="user" key="tea">The user drinks green tea</memory>'
            )
        ],
        [assistant_message("Green tea, as you like it.")],
    ]
)
agent = Agent(name="barista", instructions="Be brief.", model=model)
# A throwaway home, so trying the example leaves your own memories alone; drop `home=` to use
# the CLI's home.
scratch = tempfile.TemporaryDirectory(prefix="kairox-example-")
home = scratch.name


async def main() -> None:
    session = KairoxSession("barista", model="openai:gpt-4o-mini", budget=4000, home=home)
    try:
        first = await Runner.run(agent, "I only drink green tea.", session=session)
        print("agent:", strip_memory_markers(first.final_output))

        # The marker became a proposal; a user memory waits for the user's approval
        # (`kairox memory approve ID`, the TUI or the web UI). Approve it here:
        with Memory(home) as memory:
            for proposal in memory.get_all(status="pending"):
                print("approving:", proposal.body)
                memory.approve(proposal.id)

        second = await Runner.run(agent, "What should I drink?", session=session)
        print("agent:", second.final_output)
        sent = str(model.calls[-1].input)
        print("the approved memory reached the model:", "The user drinks green tea" in sent)
    finally:
        session.close()
        scratch.cleanup()


asyncio.run(main())
