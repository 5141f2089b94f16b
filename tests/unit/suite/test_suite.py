"""Suite files: validation errors name file, line and key; scenarios resolve; globs expand."""

from __future__ import annotations

from pathlib import Path

import pytest

from replaylab.defects import Code
from replaylab.diagnostics import InputError
from replaylab.suite import load_suite


def _suite(tmp_path: Path, text: str, recordings: int = 2) -> Path:
    rec = tmp_path / "recs"
    rec.mkdir(exist_ok=True)
    for i in range(recordings):
        (rec / f"s{i}.jsonl").write_text('{"type":"session","version":3,"id":"x"}\n')
    (rec / "s0.sub-child.jsonl").write_text('{"type":"session","version":3,"id":"c"}\n')
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return path


def test_valid_suite_resolves_scenarios_and_recordings(tmp_path):
    path = _suite(
        tmp_path,
        """\
name: demo
recordings: recs/*.jsonl
compaction: {mode: safeguard, contextTokens: 6000, reserveTokensFloor: 1000}
compact_at: turn:3
match: {tools: unordered, answer: similarity, similarity: 0.8}
expect: {defects: []}
scenarios:
  - {name: base}
  - {name: aggressive, compaction: {mode: aggressive}, expect: {defects: [MUTATION_DROPPED]}}
""",
    )
    suite = load_suite(path)
    assert [r.name for r in suite.recordings] == ["s0.jsonl", "s1.jsonl"]  # sub-agent files are not items
    base, aggressive = suite.scenarios
    assert base.compaction.mode == "safeguard" and base.compaction.context_tokens == 6000
    assert aggressive.compaction.mode == "aggressive" and aggressive.compaction.context_tokens == 6000
    assert aggressive.expect.defects == [Code.MUTATION_DROPPED]
    assert base.match.tools == "unordered" and base.compact_at == "turn:3"


def test_unknown_key_names_line_and_key(tmp_path):
    path = _suite(tmp_path, "name: demo\nrecordings: recs/*.jsonl\ncompaction:\n  mode: safeguard\n  contxtTokens: 5\n")
    with pytest.raises(InputError) as info:
        load_suite(path)
    (diag,) = info.value.diagnostics
    assert diag.line == 5 and diag.field == "compaction.contxtTokens"
    assert "unknown key 'contxtTokens'" in diag.message and str(path) in str(diag)


def test_bad_value_names_line(tmp_path):
    path = _suite(tmp_path, "name: demo\nrecordings: recs/*.jsonl\ncompaction: {mode: gentle}\n")
    with pytest.raises(InputError) as info:
        load_suite(path)
    diag = info.value.diagnostics[0]
    assert diag.line == 3 and diag.field == "compaction.mode" and "gentle" in diag.message


def test_bad_compact_at_and_missing_name(tmp_path):
    path = _suite(tmp_path, "recordings: recs/*.jsonl\ncompact_at: sometimes\n")
    with pytest.raises(InputError) as info:
        load_suite(path)
    messages = {d.field: d for d in info.value.diagnostics}
    assert "required key 'name' is missing" in messages["name"].message
    assert messages["compact_at"].line == 2 and "turn:N" in messages["compact_at"].message


def test_glob_matching_nothing_is_an_error(tmp_path):
    path = _suite(tmp_path, "name: demo\nrecordings: nowhere/*.jsonl\n")
    with pytest.raises(InputError) as info:
        load_suite(path)
    diag = info.value.diagnostics[0]
    assert diag.field == "recordings" and diag.line == 2 and "matches no .jsonl" in diag.message


def test_unknown_defect_code_rejected(tmp_path):
    path = _suite(tmp_path, "name: demo\nrecordings: recs/*.jsonl\nexpect:\n  defects: [MUTATION_DROPED]\n")
    with pytest.raises(InputError) as info:
        load_suite(path)
    assert info.value.diagnostics[0].line == 4 and "MUTATION_DROPED" in info.value.diagnostics[0].message


def test_invalid_yaml_names_line(tmp_path):
    path = _suite(tmp_path, "name: demo\nrecordings: [unclosed\n")
    with pytest.raises(InputError) as info:
        load_suite(path)
    assert info.value.diagnostics[0].code == "suite-yaml" and info.value.diagnostics[0].line is not None


def test_per_recording_expectations(tmp_path):
    path = _suite(
        tmp_path, "name: demo\nrecordings: recs/*.jsonl\nper_recording:\n  s1.jsonl: {defects: [PAIR_BROKEN]}\n"
    )
    scenario = load_suite(path).scenarios[0]
    assert scenario.expectations_for(tmp_path / "recs" / "s1.jsonl").defects == [Code.PAIR_BROKEN]
    assert scenario.expectations_for(tmp_path / "recs" / "s0.jsonl").defects == []


def test_a_per_recording_key_that_matches_no_recording_is_an_error_with_the_closest_name(tmp_path):
    """A typo in a `per_recording` key would leave its expectations unused without a word."""
    path = _suite(
        tmp_path,
        "name: demo\nrecordings: recs/*.jsonl\nper_recording:\n  s1.jsonl: {defects: [PAIR_BROKEN]}\n"
        "  s1.json: {defects: [PAIR_BROKEN]}\n  'zzz-*': {defects: []}\n",
    )
    with pytest.raises(InputError) as info:
        load_suite(path)
    typo, other = info.value.diagnostics
    assert (typo.file, typo.line, typo.field) == (str(path), 5, "per_recording['s1.json']")
    assert typo.message == "'s1.json' matches no recording of this suite; did you mean 's1.jsonl'?"
    assert other.line == 6 and other.message.startswith("'zzz-*' matches no recording of this suite; its recordings")
    assert other.message.endswith("its recordings are 's0.jsonl', 's1.jsonl'")


def test_grounding_levels_per_tool_and_argument(tmp_path):
    """`match.args.<tool>.grounding`: one level for a tool or one per argument; YAML's bare `off`
    (read as false) is the level `off`; tools without a level are grounded at `values`."""
    path = _suite(
        tmp_path,
        """\
name: demo
recordings: recs/*.jsonl
match:
  args:
    edit: {ignore: [timestamp], grounding: {newText: off, oldText: strict}}
    write: {grounding: off}
    send: {grounding: values}
scenarios:
  - {name: base}
  - {name: strict-write, match: {args: {write: {grounding: strict}}}}
""",
    )
    base, strict_write = load_suite(path).scenarios
    rules = base.match.grounding_rules()
    assert rules.tools == {"edit": {"newText": "off", "oldText": "strict"}, "write": "off"}
    assert [rules.level("edit", k) for k in ("newText", "oldText", "path")] == ["off", "strict", "values"]
    assert rules.level("write", "content") == "off" and rules.level("read", "path") == "values"
    assert strict_write.match.grounding_rules().tools == {"write": "strict"}  # a scenario's match replaces the args


@pytest.mark.parametrize(
    ("setting", "line", "says"),
    [
        ("grounding: loose", 5, "'loose' is not a grounding level: expected off, values or strict, or a mapping"),
        ("grounding: {newText: maybe}", 5, "newText: 'maybe' is not a grounding level"),
        ("grounding: [off]", 5, "[False] is not a grounding level"),
    ],
)
def test_a_bad_grounding_level_is_one_error_naming_the_field(tmp_path, setting, line, says):
    path = _suite(tmp_path, f"name: demo\nrecordings: recs/*.jsonl\nmatch:\n  args:\n    edit: {{{setting}}}\n")
    with pytest.raises(InputError) as info:
        load_suite(path)
    (diag,) = info.value.diagnostics  # not once more as "match.args should be 'exact' or 'ignore'"
    assert diag.field == "match.args.edit.grounding" and diag.line == line and says in diag.message
    assert str(path) in str(diag)


def test_litellm_model_settings_resolve_onto_every_scenario(tmp_path):
    path = _suite(
        tmp_path,
        """\
name: llm
recordings: recs/*.jsonl
model: litellm/openai/gpt-4.1-mini
model_settings: {api_base: "http://127.0.0.1:8089/v1", api_key_env: LLM_KEY, seed: 3, max_tokens: 99,
                 headers: {X-Team: "team ${TEAM}", X-Plain: visible}, local_tool_calls: true}
llm_cassettes: cassettes
record_mode: new_episodes
scenarios: [{name: a}, {name: b, model: replay}]
""",
    )
    suite = load_suite(path)
    a, b = suite.scenarios
    assert a.llm_cassettes == tmp_path / "cassettes" and a.record_mode == "new_episodes"
    assert a.model_settings == b.model_settings and b.model == "replay"
    assert a.model_settings.environment() == ["LLM_KEY", "TEAM"]
    options = a.model_settings.model_options({"LLM_KEY": "k1", "TEAM": "t1"})
    assert options["api_key"] == "k1" and options["headers"] == {"X-Team": "team t1", "X-Plain": "visible"}
    assert (options["seed"], options["max_tokens"], options["local_tool_calls"]) == (3, 99, True)
    offline = a.model_settings.model_options({})  # replaying from the cassettes: no secret needed
    assert offline["api_key"] is None and offline["headers"] == {"X-Plain": "visible"}


def test_a_scenario_model_that_is_no_model_names_its_line(tmp_path):
    path = _suite(tmp_path, "name: x\nrecordings: recs/*.jsonl\nscenarios:\n  - {name: a, model: litellm/x}\n")
    with pytest.raises(InputError) as exc:
        load_suite(path)
    [d] = exc.value.diagnostics
    assert (d.line, d.field) == (4, "scenarios.0.model") and "litellm/<provider>/<model>" in d.message


def test_a_context_window_is_the_suites_unless_a_scenario_gives_its_own(tmp_path):
    path = _suite(
        tmp_path,
        "name: x\nrecordings: recs/*.jsonl\ncontext_window: {tokens: 9000}\nscenarios:\n"
        "  - {name: default}\n  - {name: silent, context_window: {tokens: 4000, overflow: usage}}\n",
    )
    default, silent = load_suite(path).scenarios
    assert (default.context_window.tokens, default.context_window.overflow) == (9000, "error")
    assert default.context_window.provider == "anthropic"
    assert (silent.context_window.tokens, silent.context_window.overflow) == (4000, "usage")


def test_a_context_window_of_an_unknown_provider_names_its_line_and_the_known_ones(tmp_path):
    path = _suite(tmp_path, "name: x\nrecordings: recs/*.jsonl\ncontext_window:\n  tokens: 9000\n  provider: acme\n")
    with pytest.raises(InputError) as exc:
        load_suite(path)
    [d] = exc.value.diagnostics
    assert (d.line, d.field) == (5, "context_window.provider") and "anthropic, llama-server" in d.message


def test_every_public_name_of_the_suite_package_is_its_own_modules_and_an_unknown_one_is_an_error():
    """`replaylab.suite` imports its modules on first use (finding suite files needs none of the
    schema): each name it exports is the object of the module it names as its home."""
    import importlib

    import replaylab.suite as suite

    for name in suite.__all__:
        home = importlib.import_module(f"replaylab.suite.{suite._HOME[name]}")
        assert getattr(suite, name) is getattr(home, name), name
    assert set(dir(suite)) >= set(suite.__all__)
    with pytest.raises(AttributeError, match="no_such_name"):
        suite.no_such_name  # noqa: B018
