"""Route 5: the scrubber cannot be stalled.

`password` followed by 26,000 spaces took 21.5 s to scrub, `sk-` repeated 15,000 times 26.8 s:
quadratic backtracking (or worse), per call, in whatever replaylab scrubs — a tool result, a report,
a cassette. What a user would lose: a CI run that never ends. Every worst input of the bench
(`bench/cases/scrub_worst.py`, which prints how far each is from ordinary text of the same size)
is scrubbed here at 200 KB, with a real secret after it, in a child process given a generous
time limit — a guard against a hang, not an assertion on speed (the bench measures speed). The
secret after each one is still redacted.
"""

from __future__ import annotations

import json
import subprocess
import sys

from bench.cases.scrub_worst import WORST, WORST_BYTES
from repo_paths import REPO_ROOT

#: a guard against a stalled scrubber (all inputs together), not an assertion on speed
HANG_GUARD_S = 600

SECRETS = {
    "password": 'password: "Hunter-2-vault"',
    "OpenAI key": "sk-proj-" + "Qv7Lm2Xp9Rt4Wz8Kc1Nb6Hd3Fg5Js0Ay",
    "header": "Authorization: Basic dXNlcjpodW50ZXIy",
}

CHILD = """
import json, sys
from bench.cases.scrub_worst import WORST, WORST_BYTES
from replaylab.scrub import Scrubber

secrets = json.loads(sys.argv[1])
scrubber = Scrubber(literals=())
out = {}
for name, make in WORST.items():
    text = make(WORST_BYTES)
    scrubbed = scrubber.text(text + "\\n" + "\\n".join(secrets.values()) + "\\n")
    out[name] = [label for label, secret in secrets.items() if secret.split()[-1].strip('"') in scrubbed]
print(json.dumps(out))
"""


def test_every_worst_input_is_scrubbed_and_the_secret_after_it_still_redacted() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(SECRETS)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    leaked = json.loads(done.stdout)
    assert set(leaked) == set(WORST) and WORST_BYTES == 200_000
    assert {name: labels for name, labels in leaked.items() if labels} == {}
