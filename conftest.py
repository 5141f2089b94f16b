"""Root conftest: the test-run options, and how a whole run uses the machine. Tests share fixtures
through tests/conftest.py."""

import pytest

pytest_plugins = ["pytester"]  # in-process pytest runs for the plugin's tests (declared here: the root conftest)

#: the kinds of tests in the order a parallel run starts them: the slow kinds first, so that the
#: short unit tests fill the gaps at the end and both workers finish together
ORDER = ("tests/oracles/", "tests/realdata/", "tests/golden/", "tests/integration/", "tests/robustness/")


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        dest="update_golden",
        default=False,
        help="rewrite the golden results (tests/golden/bundled/, bench.json, realdata.json) from this run "
        "instead of comparing with them",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """`pytest` without paths (the README's test command, CI) runs on every core: `-n auto` with
    work stealing, unless `-n` is given (`-n0`: one process). `pytest tests/x.py` or a node id stays
    in one process, as a developer expects (add `-n auto` to spread it). The `pytest --replaylab`
    runs the tests start in this folder name their paths, so they stay in one process too."""
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return  # `-p no:xdist`, or an xdist worker
    if getattr(config.option, "numprocesses", None) is not None:
        return  # the run chose
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.option.collectonly:
        config.option.numprocesses = "auto"
        config.option.dist = "worksteal"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On xdist's workers, the slow kinds of tests first (`ORDER`; a stable sort: within a kind, as
    collected). A one-process run keeps pytest's order."""
    if hasattr(config, "workerinput"):
        items.sort(key=_kind_rank)


def _kind_rank(item: pytest.Item) -> int:
    path = item.nodeid
    return next((rank for rank, prefix in enumerate(ORDER) if path.startswith(prefix)), len(ORDER))
