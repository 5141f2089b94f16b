"""awk's program as its lexer reads it: strings, regular expressions and comments blanked,
backslash-newlines joined — so a `;` or `}` in a string hides no redirection, and a division is no
regular expression."""

from __future__ import annotations

import pytest

from replaylab.safety.shell_awk import awk_code


@pytest.mark.parametrize(
    ("program", "code"),
    [
        ('BEGIN { print ";" > "f" }', 'BEGIN { print "" > "" }'),
        ("{ print /;|}/ > out }", "{ print // > out }"),
        ("{ n += $2 } END { print n / NR }", "{ n += $2 } END { print n / NR }"),
        ("{ print $1 / 2, (a) / b, x[1] / 3 }", "{ print $1 / 2, (a) / b, x[1] / 3 }"),
        ('{ print "a\\"b" } # a comment with "quotes"', '{ print "" } '),
        ('BEGIN { system\\\n("x") }', 'BEGIN { system("") }'),
    ],
)
def test_awk_code_blanks_literals_and_keeps_code(program: str, code: str) -> None:
    assert awk_code(program) == code
