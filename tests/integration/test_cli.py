"""The `replaylab` dispatcher: `--help` lists every command without importing litellm, and a
command whose module cannot be imported is an error naming it, never a silently missing command."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from replaylab import cli
from replaylab.cli import BROKEN_INSTALL, COMMANDS, main
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
BROKEN_MODULES = {
    "missing-dependency": (
        "import replaylab_no_such_dependency\n",
        "ModuleNotFoundError: No module named 'replaylab_no_such_dependency'",
    ),
    "raises-at-import": ("raise RuntimeError('half-installed')\n", "RuntimeError: half-installed"),
}


def test_help_lists_every_command_without_importing_litellm():
    code = (
        "import json, sys\n"
        "from replaylab.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit as exc:\n"
        "    status = exc.code\n"
        "print(json.dumps({'status': status, 'loaded': [m for m in ('litellm', 'vcr') if m in sys.modules]}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO / "tests")
    assert proc.returncode == 0, proc.stderr
    *help_lines, last = proc.stdout.strip().splitlines()
    assert json.loads(last) == {"status": 0, "loaded": []}
    listed = "\n".join(help_lines)
    # a name longer than argparse's help column has its help on the next line
    assert all(f"    {name} " in listed or f"    {name}\n" in listed for name in COMMANDS), listed


@pytest.fixture(params=sorted(BROKEN_MODULES))
def broken_command(request, tmp_path, monkeypatch) -> str:
    """A `broken` command whose module fails to import the way `request.param` says."""
    body, _ = BROKEN_MODULES[request.param]
    (tmp_path / "replaylab_broken_command.py").write_text(body, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(cli.COMMANDS, "broken", ("replaylab_broken_command", "a command that cannot be imported"))
    return request.param


@pytest.mark.parametrize("argv", [["broken"], ["broken", "--help"], ["--help"], []])
def test_a_command_that_cannot_be_imported_is_an_error_naming_it(broken_command, argv, capsys):
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == BROKEN_INSTALL and out == ""
    assert "command 'broken' cannot be loaded" in err and "replaylab_broken_command" in err
    assert BROKEN_MODULES[broken_command][1] in err


def test_another_command_still_runs_when_one_cannot_be_imported(broken_command, capsys):
    """Only the command that runs is imported, so one broken module does not take the others down."""
    recording = REPO / "recordings" / "helpdesk" / "cancel-two-orders.jsonl"
    assert main(["inspect", str(recording)]) == 0
    assert "cancel-two-orders" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["inspect", "init"])
def test_a_reader_that_closes_the_pipe_early_ends_the_command_quietly(command, tmp_path):
    """`replaylab inspect F | head -1`: the reader is gone before the command writes. It stops as a
    command killed by SIGPIPE would, with no internal error and no traceback, and nothing is
    flushed into the closed pipe when the interpreter exits."""
    from builders.transcripts import helpdesk_session

    path = helpdesk_session().write(tmp_path / "s.jsonl")
    argv = [str(path)] if command == "inspect" else ["--force", "--import", str(tmp_path)]
    done = subprocess.Popen(
        [sys.executable, "-m", "replaylab.cli", command, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert done.stdout is not None and done.stderr is not None
    done.stdout.close()  # before the interpreter has even started: every write finds no reader
    stderr = done.stderr.read().decode()
    assert done.wait(timeout=120) == cli.READER_GONE, stderr
    assert stderr == ""
