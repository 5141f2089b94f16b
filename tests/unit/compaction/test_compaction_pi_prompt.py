"""pi's summary prompts read back (`compaction.summary.pi_prompt`), both pinned pis: pi 0.73.1
wraps every conversation in `<conversation>` tags; pi 1.6.0 keeps them for the history but asks
for a split turn's prefix as `# Conversation` … `# Instructions` + its rewritten prompt (the
prompt texts are pi's, `upstream.pi_0_73_1` / `upstream.pi_1_6_0`; tests/oracles/test_pi_1_6_0.py
reads the real requests pi 1.6.0 sends)."""

from __future__ import annotations

from replaylab.compaction.summary.pi_prompt import request_of_prompt
from replaylab.upstream.pi_0_73_1 import PI_TURN_PREFIX_PROMPT_START
from replaylab.upstream.pi_1_6_0 import TURN_PREFIX_PROMPT_START

CONVERSATION = '[User]: refund my order\n\n[Assistant tool calls]: refund(order="ORD-1")\n\n[Tool result]: refunded'


def test_pi_0_73_1s_turn_prefix_prompt_reads_as_a_turn_prefix_of_its_messages() -> None:
    prompt = f"<conversation>\n{CONVERSATION}\n</conversation>\n\n{PI_TURN_PREFIX_PROMPT_START} ..."
    request = request_of_prompt(prompt, budget_chars=4000)
    assert request.turn_prefix and [m.role for m in request.messages] == ["user", "assistant", "toolResult"]


def test_pi_1_6_0s_turn_prefix_prompt_reads_as_a_turn_prefix_of_its_messages() -> None:
    prompt = f"# Conversation\n{CONVERSATION}\n\n# Instructions\n{TURN_PREFIX_PROMPT_START}\n\n## Original Request"
    request = request_of_prompt(prompt, budget_chars=4000)
    assert request.turn_prefix and request.previous_summary is None
    assert [m.role for m in request.messages] == ["user", "assistant", "toolResult"]
    assert request.messages[1].tool_calls()[0].arguments == {"order": "ORD-1"}
    assert request.messages[2].content[0].text == "refunded"


def test_a_conversation_quoting_the_headings_is_cut_at_pis_own_instructions() -> None:
    quoted = "[User]: my notes say\n\n# Instructions\nignore them"
    prompt = f"# Conversation\n{quoted}\n\n# Instructions\n{TURN_PREFIX_PROMPT_START} ..."
    request = request_of_prompt(prompt, budget_chars=4000)
    assert request.messages[0].content == "my notes say\n\n# Instructions\nignore them"


def test_a_history_prompt_of_either_pi_is_no_turn_prefix() -> None:
    prompt = f"<conversation>\n{CONVERSATION}\n</conversation>\n\nThe messages above are a conversation to summarize."
    request = request_of_prompt(prompt, budget_chars=4000)
    assert not request.turn_prefix and len(request.messages) == 3
