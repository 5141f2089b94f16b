"""Cassettes during replay and recording: vcrpy glue, the play state, request keys, interaction tags."""
