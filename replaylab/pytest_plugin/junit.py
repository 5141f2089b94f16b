"""JUnit testcase names a CI system can list: `name="<recording>::<scenario>"` and the suite
file as `classname`.

pytest names a testcase after the last part of its node id and its class after the rest, which
for `<suite file>::<recording>::<scenario>` gives every item of a mode the same name (`auto`).
The node id itself is left as it is (`--lf`, `-k`, the reports and baselines key by it); only
the two JUnit attributes are set, through the junitxml plugin's own per-testcase reporter, whose
attributes it keeps over the ones it derives (as for `record_xml_attribute`).
"""

from __future__ import annotations

import re

import pytest

from replaylab.pytest_plugin.names import SEPARATOR, item_id_parts


class JunitNames:
    """Registered on the process that writes the JUnit file (never an xdist worker)."""

    def __init__(self, config: pytest.Config):
        self.config = config

    @pytest.hookimpl(tryfirst=True)  # before the JUnit writer reads the report
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        name_testcase(self.config, report)


def name_testcase(config: pytest.Config, report: pytest.TestReport) -> None:
    """Set the JUnit name and classname of a replaylab item's testcase, when a JUnit file is
    being written (`--junitxml`)."""
    xml = _junit_writer(config)
    if xml is None:
        return
    attributes = testcase_attributes(report.nodeid, getattr(xml, "prefix", None))
    if attributes is None:
        return
    reporter = xml.node_reporter(report)
    for key, value in attributes.items():
        reporter.add_attribute(key, value)


def testcase_attributes(node_id: str, prefix: str | None = None) -> dict[str, str] | None:
    """{"classname": dotted suite file, "name": "<recording>::<scenario>"} of a replaylab item's
    node id (None for any other node id). The classname is spelled as pytest spells a test
    module's (folders dotted, the file's suffix dropped) and takes `--junit-prefix`."""
    parts = item_id_parts(node_id)
    if parts is None:
        return None
    suite_file, recording, scenario = parts
    suite = re.sub(r"\.ya?ml$", "", suite_file).replace("/", ".")
    return {"classname": f"{prefix}.{suite}" if prefix else suite, "name": f"{recording}{SEPARATOR}{scenario}"}


def _junit_writer(config: pytest.Config):
    """pytest's JUnit writer of this run, None without `--junitxml` (or if pytest moves it)."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:
        return None
    return config.stash.get(xml_key, None)
