"""The plugin's settings: declared here, and read only here (command-line option first, then the
ini value, then the default)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import pytest

if TYPE_CHECKING:
    from replaylab.checks.agent_window import VerifyWithPi
    from replaylab.qa.plan import RunOptions


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("replaylab", "replaylab: compaction replay and regression testing")
    group.addoption(
        "--replaylab",
        action="store_true",
        default=False,
        help="collect suite YAML files under the given paths; replay each recording × scenario "
        "on the full and the compacted context and report what changed",
    )
    group.addoption(
        "--replaylab-report",
        metavar="DIR",
        default=None,
        help="where to write replaylab.html / .json / .md (default: ini replaylab_report or reports/)",
    )
    group.addoption(
        "--replaylab-model",
        metavar="MODEL",
        default=None,
        help="override every suite's model: replay (offline default) | litellm/<provider>/<model> "
        "| scripted:<script.yaml>",
    )
    group.addoption(
        "--replaylab-mode",
        metavar="MODE",
        default=None,
        choices=["safeguard", "auto", "aggressive", "manual"],
        help="override every suite's compaction mode",
    )
    group.addoption(
        "--replaylab-record-mode",
        metavar="MODE",
        default=None,
        choices=["none", "once", "new_episodes", "all"],
        help="LLM cassette record mode for litellm models (default none: never call a model)",
    )
    group.addoption(
        "--replaylab-strict",
        action="store_true",
        default=None,
        help="fail scenarios that were not exercised (no compaction happened) and recordings with problems",
    )
    group.addoption(
        "--replaylab-bless",
        action="store_true",
        default=False,
        help="write the run's per-item results as the baseline file; later runs report regressions against it",
    )
    group.addoption(
        "--replaylab-baseline",
        metavar="FILE",
        default=None,
        help="baseline file to write (--replaylab-bless) or compare with "
        "(default: <report dir>/../replaylab-baseline.json or ini replaylab_baseline)",
    )
    group.addoption(
        "--replaylab-shard",
        metavar="K/N",
        default=None,
        help="run only shard K of N (1-based; stable split by item id) — merge with `replaylab report merge`",
    )
    group.addoption(
        "--replaylab-verify-windows",
        "--replaylab-verify-with-pi",
        dest="replaylab_verify_windows",
        choices=("auto", "on", "off"),
        default="auto",
        help="compare every compacted window with the context the item's agent itself (its pinned npm "
        "package) builds from the working copy (auto: when that agent's oracle is installed; on: it must be; "
        "off: never). A difference is AGENT_CONTEXT_DIFFERS",
    )
    group.addoption(
        "--replaylab-agent",
        metavar="AGENT@VERSION",
        default=None,
        help="judge every item under this agent's rules (context rebuild, estimate, cut, trigger), over every "
        "suite's `agent:`: " + ", ".join(_profile_names()) + ". Default: the suite's, else each session's own "
        "(OpenClaw's sessions openclaw@2026.9.6, others pi@0.73.1)",
    )
    group.addoption(
        "--replaylab-context-tokens",
        metavar="N|auto",
        type=_context_tokens,
        default=None,
        help="override every suite's contextTokens: a number, or auto — per recording, from its own "
        "turn-start windows (compaction where the session is large; the rule is printed with each result). "
        "Suites that set none use auto",
    )
    group.addoption(
        "--replaylab-reserve-tokens-floor",
        metavar="N",
        type=_tokens,
        default=None,
        help="override every suite's reserveTokensFloor (the budget is contextTokens minus it; unset with a "
        "set contextTokens: OpenClaw's 20,000 within a quarter of the window; not read for openclaw@2026.9.6, "
        "which retired it and always keeps that reserve)",
    )
    group.addoption(
        "--replaylab-keep-recent-tokens",
        metavar="N",
        type=_tokens,
        default=None,
        help="override every suite's keepRecentTokens (the recent tail compaction keeps verbatim)",
    )
    group.addoption(
        "--replaylab-compactor",
        metavar="SPEC",
        default=None,
        help="the compactor under test in every suite: python:package.module:callable (called with the "
        "seed contract's params and the working copy) or command:ARGV (shell-lexed; AgentHarnessCompactParams "
        "JSON on stdin, AgentHarnessCompactResult JSON on stdout, run in the suite's folder), or pi / openclaw "
        "(the bundled pi's / OpenClaw 2026.9.6's own compaction, offline). Wins over a "
        "pytest_replaylab_compactor hook and the suite's compactor: key; default replaylab's own",
    )
    _add_nothing_exercised_options(group, parser)
    parser.addini("replaylab_report", "default report directory", default="reports")
    parser.addini("replaylab_model", "default model override", default="")
    parser.addini("replaylab_mode", "default compaction mode override", default="")
    parser.addini("replaylab_strict", "treat not-exercised scenarios as failures", type="bool", default=False)
    parser.addini("replaylab_baseline", "baseline file for --replaylab-bless", default="")


def _add_nothing_exercised_options(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    group.addoption(
        "--replaylab-allow-nothing-exercised",
        action="store_true",
        default=None,
        help="exit with pytest's own status when no item was exercised (none passed, failed, errored "
        "or could not compact); without it such a run exits 6",
    )
    parser.addini(
        "replaylab_allow_nothing_exercised",
        "a run that exercised nothing exits with pytest's own status, not 6",
        type="bool",
        default=False,
    )


def allow_nothing_exercised(config: pytest.Config) -> bool:
    """The option wins over the ini value when given (its default is None, not False)."""
    value = config.getoption("replaylab_allow_nothing_exercised")
    return bool(value if value is not None else config.getini("replaylab_allow_nothing_exercised"))


def _tokens(text: str) -> int:
    import argparse

    from replaylab.suite import MAX_TOKENS

    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of tokens, e.g. 8000") from None
    if not 0 < value <= MAX_TOKENS:
        raise argparse.ArgumentTypeError(f"{text!r}: expected 1 to {MAX_TOKENS:,} tokens")
    return value


def _context_tokens(text: str) -> int | Literal["auto"]:
    return "auto" if text.strip().lower() == "auto" else _tokens(text)


class BudgetOverrides(TypedDict):
    """The budget settings of the command line, as `RunOptions` takes them (None: not given)."""

    context_tokens: int | Literal["auto"] | None
    reserve_tokens_floor: int | None
    keep_recent_tokens: int | None


def budget_overrides(config: pytest.Config) -> BudgetOverrides:
    """The budget settings given on the command line; a contextTokens that leaves no budget after
    the reserve is a usage error before collection, not a failure in every item."""
    values: BudgetOverrides = {
        "context_tokens": config.getoption("replaylab_context_tokens"),
        "reserve_tokens_floor": config.getoption("replaylab_reserve_tokens_floor"),
        "keep_recent_tokens": config.getoption("replaylab_keep_recent_tokens"),
    }
    context, reserve = values["context_tokens"], values["reserve_tokens_floor"]
    if isinstance(context, int) and reserve is not None and reserve >= context:
        raise pytest.UsageError(
            f"--replaylab-context-tokens {context} leaves no budget after --replaylab-reserve-tokens-floor "
            f"{reserve}; expected contextTokens above the reserve"
        )
    return values


def check_model(config: pytest.Config) -> None:
    """A model override that names no usable model is a usage error before collection, not an
    error in every item."""
    from replaylab.model_spec import model_spec_problem

    spec = model(config)
    problem = model_spec_problem(spec, script_given=False) if spec else None
    if problem is not None:
        raise pytest.UsageError(f"--replaylab-model {problem}")


def compactor(config: pytest.Config) -> Any:
    """`--replaylab-compactor` as a spec (`qa.compactor_spec`); None without one. A malformed
    value is a usage error before collection."""
    text = config.getoption("replaylab_compactor")
    if text is None:
        return None
    from replaylab.compactors.spec import parse_option

    try:
        return parse_option(text)
    except ValueError as exc:
        raise pytest.UsageError(f"--replaylab-compactor {exc}") from None


def enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("replaylab"))


def _option_or_ini(config: pytest.Config, name: str) -> str | None:
    """The command-line value of `--replaylab-<name>`, else its ini value; None when neither is set."""
    return config.getoption(f"replaylab_{name}") or config.getini(f"replaylab_{name}") or None


def model(config: pytest.Config) -> str | None:
    return _option_or_ini(config, "model")


def mode(config: pytest.Config) -> str | None:
    return _option_or_ini(config, "mode")


def strict(config: pytest.Config) -> bool:
    """`--replaylab-strict` wins over the ini value when given (its default is None, not False)."""
    value = config.getoption("replaylab_strict")
    return bool(value if value is not None else config.getini("replaylab_strict"))


def report_dir(config: pytest.Config) -> Path:
    return _from_invocation_dir(config, _option_or_ini(config, "report") or "reports")


def baseline_path(config: pytest.Config) -> Path:
    """The blessed baseline: the option or ini file, else next to the report directory."""
    value = _option_or_ini(config, "baseline")
    return _from_invocation_dir(config, value) if value else report_dir(config).parent / "replaylab-baseline.json"


def bless(config: pytest.Config) -> bool:
    return bool(config.getoption("replaylab_bless"))


def shard_text(config: pytest.Config) -> str | None:
    """`--replaylab-shard` as given (checked by `shard`), as the report names the shard."""
    return config.getoption("replaylab_shard")


def shard(config: pytest.Config) -> tuple[int, int] | None:
    """(K, N) of `--replaylab-shard K/N`; None without one. A malformed value is a usage error."""
    text = shard_text(config)
    return parse_shard(text) if text is not None else None


def parse_shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--replaylab-shard {text!r}: expected K/N with integers, e.g. 1/4") from None
    if not (n >= 1 and 1 <= k <= n):
        raise pytest.UsageError(f"--replaylab-shard {text!r}: expected 1 <= K <= N")
    return k, n


def run_options(config: pytest.Config) -> RunOptions:
    """What each item's pipeline run takes from the command line and the ini file."""
    from replaylab.qa.plan import RunOptions

    return RunOptions(
        model=model(config),
        mode=mode(config),
        record_mode=config.getoption("replaylab_record_mode"),
        strict=strict(config),
        verify_with_pi=verify_with_pi(config),
        agent=agent(config),
        **budget_overrides(config),
    )


def verify_with_pi(config: pytest.Config) -> VerifyWithPi:
    return config.getoption("replaylab_verify_windows") or "auto"


def _profile_names() -> list[str]:
    from replaylab.upstream.profiles import profiles

    return sorted(profiles())


def agent(config: pytest.Config) -> str | None:
    """`--replaylab-agent`: a profile's name; an unknown one is a usage error naming the known ones."""
    from replaylab.upstream.profiles import UnknownProfile, profile_named

    value = config.getoption("replaylab_agent")
    if value is None:
        return None
    try:
        return profile_named(value).name
    except UnknownProfile as exc:
        raise pytest.UsageError(f"replaylab: --replaylab-agent: {exc}") from None


def _from_invocation_dir(config: pytest.Config, value: str) -> Path:
    path = Path(value)
    return path if path.is_absolute() else Path(config.invocation_params.dir) / path
