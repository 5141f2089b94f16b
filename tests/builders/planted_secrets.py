"""Secrets the scrubbing tests plant: one of each kind the scrubber must catch.

They are assembled at run time from pieces so that no literal key sits in the repository for a
secret scanner to flag.
"""

OPENAI = "sk-" + "proj-" + "Zx81kLmNoPqRsTuVwXyZ0123456789abcdEFGH"
ANTHROPIC = "sk-" + "ant-" + "api03-" + "q9W8e7R6t5Y4u3I2o1PaSdFgHjKl"
JWT = "eyJhbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiJjdXN0LTcifQ" + "." + "c2lnbmF0dXJlLXZhbHVl"
AWS_ID = "AKIA" + "Q3EXAMPLE7ZK2M4P"
AWS_SECRET = "wJalrXUtnFEMI" + "/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
PASSWORD = "Tr0ub4dor-" + "and-3"

#: what must never appear in a written file (for the AWS secret: its distinctive tail)
SECRETS = [OPENAI, ANTHROPIC, JWT, AWS_ID, AWS_SECRET[8:], GITHUB, GOOGLE, PASSWORD]
