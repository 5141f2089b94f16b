"""The one base of every error a user sees.

Whatever a user hits — their input, their machine, a part replaylab runs for them (a compactor,
an agent oracle, a model, a tool process) — is a `ReplaylabError` with a message that says what
happened and what to do, printed without a traceback. Anything else that escapes is a bug in
replaylab, and the command line says so."""


class ReplaylabError(Exception):
    """An error a user sees, said in its message."""
