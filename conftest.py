"""Root conftest: the test-run options. Tests share fixtures through tests/conftest.py."""

pytest_plugins = ["pytester"]  # in-process pytest runs for the plugin's tests (declared here: the root conftest)


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        dest="update_golden",
        default=False,
        help="rewrite the golden results (tests/golden/bundled/, bench.json, realdata.json) from this run instead of comparing with them",
    )
