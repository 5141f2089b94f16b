"""A compactor under test (a Python callable or an external process) as the pipeline's compactor,
`compact(params, *, classifier, writer) -> CompactResult`.

The compactor receives the seed contract's params with `sessionFile` the item's working copy and
appends its compaction entry to that file itself; replaylab then checks what it can without
trusting it (the pipeline's `qa.recheck` does the rest, on the window pi rebuilds):

* the recording and its cassette are byte for byte what they were;
* the working copy still starts with the bytes it held (an append, not a rewrite), and the
  pipeline's writer takes the appended bytes as the file's own (`TranscriptWriter.adopt_appended`);
* the answer is an `AgentHarnessCompactResult` (`qa.compactor_contract`), and on success its
  `compactionEventId` names a compaction entry this call appended;
* the token counts the report shows are measured on the windows pi shows, not taken from it.

Whatever goes wrong is a finding, never a traceback: a failed `CompactResult` whose findings hold
one COMPACTION_FAILED (an infrastructure error: the item's outcome is `error`, the run goes on)
with `detail.kind` one of `FAILURE_KINDS`, its message naming the compactor and carrying the tail
of its stderr, scrubbed. The bundled OpenClaw compactor may also decline to compact (its safeguard
cancels when its quality guard rejects the summary): that is no failure of the run but a finding
about the compactor, COMPACTION_CANCELLED, with OpenClaw's reason.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from replaylab.compaction.params import CompactParams, CompactResult
from replaylab.compactors.contract import ContractError, params_json, read_result
from replaylab.compactors.spec import (
    CommandCompactor,
    CompactorSpec,
    GivenCompactor,
    OpenClawCompactor,
    PiCompactor,
    PythonCompactor,
)
from replaylab.defects import Code, Defect
from replaylab.scrub import scrub_text
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import CompactionEntry
from replaylab.transcript.restated import restatements
from replaylab.transcript.writer import FileState, NotOwnedError, file_state_again

if TYPE_CHECKING:
    from replaylab.compactors.node_worker import NodeWorker
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.writer import TranscriptWriter

FAILURE_KINDS = (
    "not_found",  # no such module, callable or executable
    "crashed",  # raised, or exited with a non-zero status
    "timed_out",  # still running at `timeout_s` (and ended then)
    "too_much_output",  # wrote more to stdout or stderr than replaylab reads (and ended then)
    "invalid_json",  # stdout is not one JSON value
    "contract",  # not an AgentHarnessCompactResult (the field is named), or no entry it names
    "wrote_recording",  # the recording or its cassette changed
    "rewrote_working_copy",  # the bytes before its append changed
    "reported_failure",  # it answered success: false
    "refused",  # the bundled OpenClaw is not the build its driver binds to (both versions named)
)
#: what the bundled OpenClaw driver adds to the contract's answer (`compactors.openclaw`)
OPENCLAW_EXTRAS = ("mode", "fromHook", "firstKeptEntryId", "summaryCalls", "openclaw", "skipped", "code")
#: what the bundled OpenClaw driver answers when its safeguard cancels
_CANCEL_KEYS = ("cancelled", "reason", "cause", "summaryCalls", "firstKeptEntryId", "refused")
#: characters of a compactor's stderr a finding keeps (the end: where the error is)
STDERR_TAIL_CHARS = 2000


@dataclass
class Failed(Exception):
    """Why a call gave no usable compaction: one of `FAILURE_KINDS`, in words, with its stderr."""

    kind: str
    what: str
    stderr: str = ""
    field: str | None = None


@dataclass(frozen=True)
class _Ran:
    """What one call gave: the answer, or why there is none, and what it wrote to stderr."""

    answer: Any = None
    stderr: str = ""
    failure: Failed | None = None
    #: the bundled OpenClaw's cancel: its reason, cause and how many summary requests it made
    cancelled: dict[str, Any] | None = None
    #: what a bundled compactor said it did, for the result's notes
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceStates:
    """The files a compactor must not write, with their state before the run."""

    files: tuple[tuple[Path, FileState | None], ...]

    def changed(self) -> list[Path]:
        out = []
        for path, state in self.files:
            if state is None:
                continue
            try:
                now = file_state_again(state, path)
            except OSError:
                out.append(path)
                continue
            if now.sha256 != state.sha256:
                out.append(path)
        return out


def _worker_crash(result: dict[str, Any]) -> Failed | None:
    """A bundled compactor's answer for a compaction its node worker caught an error in (`crashed`):
    what a process of its own would have died of, so the same kind, with the error's stack."""
    if result.get("crashed") is not True:
        return None
    error = str(result.get("error") or "")
    return Failed("crashed", f"raised {error.splitlines()[0] if error else 'an error'}", error)


class ExternalCompactor:
    """The pipeline's compactor for `spec` (see the module docstring); `cwd`: the suite's folder."""

    def __init__(self, spec: CompactorSpec, sources: SourceStates, cwd: Path, profile: Any = None):
        self.spec = spec
        #: the item's agent profile (`upstream.profiles.AgentProfile`): which pi `compactor: pi` runs
        self.profile = profile
        self.sources = sources
        self.cwd = cwd
        self.name = spec.name()
        #: the summary requests the bundled compactors made, each call's in order (`compactors.summary_endpoint`)
        self.summary_requests: list[dict[str, Any]] = []
        #: the OpenClaw worker the bundled `openclaw` compactor uses (None: the process's own)
        self.openclaw_worker: Any = None
        #: the summary a bundled compactor's request gets (None: the extractive summary it asks for)
        self.summary_answer: Any = None

    def __call__(
        self,
        params: CompactParams,
        *,
        classifier: ToolClassifier | None = None,
        writer: TranscriptWriter | None = None,
        **_: Any,
    ) -> CompactResult:
        copy = Path(params.session_file).absolute()
        params = params.model_copy(update={"session_file": str(copy)})
        before = _transcript(copy, writer)
        before_ids = set(before.by_id)
        size, digest = _state(copy, writer)
        ran = self._run(params, copy)
        try:
            wrote = self.sources.changed()
            if wrote:
                names = ", ".join(p.name for p in wrote)
                raise Failed("wrote_recording", f"wrote to {names}: replay must never change it")
            _keep_appended(copy, writer, size, digest)
            if ran.failure is not None:
                raise ran.failure
            try:
                result, ignored = read_result(ran.answer)
            except ContractError as exc:
                raise Failed("contract", f"answered no AgentHarnessCompactResult: {exc}", field=exc.field) from None
            if not result.success and ran.cancelled is not None:
                return self._cancelled(params, copy, ran.cancelled, list(ran.notes))
            if not result.success:
                raise Failed("reported_failure", f"reported success: false ({result.error or 'no error given'})")
            after = _transcript(copy, writer)
            _appended_entry(result, after, before_ids)
        except Failed as failed:
            return self._failed(params, copy, failed, failed.stderr or ran.stderr)
        _measured(result, before.path_to(params.leaf_id), after.path_to(result.leaf_id))
        result.mode = params.compaction_mode
        result.session_file = result.working_copy = str(copy)
        if ignored:
            result.notes.append(f"{self.name}: keys outside the contract left out: {', '.join(ignored[:10])}")
        result.notes.extend(ran.notes)
        return result

    # ------------------------------------------------------------ one call

    def _run(self, params: CompactParams, copy: Path) -> _Ran:
        if isinstance(self.spec, PiCompactor):
            return self._run_pi(self.spec, params, copy)
        if isinstance(self.spec, OpenClawCompactor):
            return self._run_openclaw(self.spec, params)
        if isinstance(self.spec, CommandCompactor):
            return self._run_command(self.spec, params, copy)
        try:
            function = self._function()
        except Failed as failed:
            return _Ran(failure=failed)
        captured = io.StringIO()
        try:
            with contextlib.redirect_stderr(captured):
                answer = function(params.model_copy(deep=True), copy)  # its own: the pipeline reuses params
        except (Exception, SystemExit) as exc:  # somebody else's code may raise anything, even exit
            stderr = captured.getvalue() + traceback.format_exc()
            return _Ran(stderr=stderr, failure=Failed("crashed", f"raised {type(exc).__name__}: {exc}", stderr))
        return _Ran(answer, captured.getvalue())

    def _function(self) -> Any:
        if isinstance(self.spec, GivenCompactor):
            return self.spec.function
        assert isinstance(self.spec, PythonCompactor)
        module_name, _, attributes = self.spec.python.partition(":")
        try:
            target: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if module_name == missing or module_name.startswith(missing + "."):
                raise Failed("not_found", f"cannot be imported: no module named {missing!r}") from None
            raise Failed("crashed", f"failed to import: {exc}", traceback.format_exc()) from None
        except (Exception, SystemExit) as exc:
            raise Failed("crashed", f"failed to import: {type(exc).__name__}: {exc}", traceback.format_exc()) from None
        for part in attributes.split("."):
            if not hasattr(target, part):
                raise Failed("not_found", f"has no attribute {part!r} in {module_name}")
            target = getattr(target, part)
        if not callable(target):
            raise Failed("not_found", f"is a {type(target).__name__}, not a callable")
        return target

    def _run_pi(self, spec: PiCompactor, params: CompactParams, copy: Path) -> _Ran:
        """The pinned pi's compaction by the process's worker for that pi (`compactors.pi_worker`),
        its summary model served on 127.0.0.1 for this call only."""
        from replaylab.compactors.summary_endpoint import SummaryEndpoint

        worker = bundled_worker(spec, self.profile)
        assert worker is not None
        with SummaryEndpoint() as endpoint:
            got = worker.compact(params_json(params), endpoint.url, spec.timeout_s, cwd=str(self.cwd))
        self.summary_requests.extend(endpoint.requests)
        if got.failure is not None:
            return _Ran(stderr=got.stderr, failure=Failed(got.failure, got.what, got.stderr))
        crash = _worker_crash(got.result)
        if crash is not None:
            return _Ran(stderr=crash.stderr, failure=crash)
        return _Ran(got.result, "\n".join(got.log))

    def _run_openclaw(self, spec: OpenClawCompactor, params: CompactParams) -> _Ran:
        """The pinned OpenClaw's compaction by the process's worker (`compactors.openclaw`), its
        summary model served on 127.0.0.1 for this call only."""
        from replaylab.compactors.summary_endpoint import SummaryEndpoint

        worker = self.openclaw_worker or bundled_worker(spec)
        assert worker is not None
        with SummaryEndpoint(self.summary_answer) as endpoint:
            got = worker.compact(params_json(params), endpoint.url, spec.timeout_s)
        self.summary_requests.extend(endpoint.requests)
        notes = tuple(f"openclaw: {line}" for line in got.log)
        if got.failure is not None:
            return _Ran(stderr=got.stderr, failure=Failed(got.failure, got.what, got.stderr), notes=notes)
        crash = _worker_crash(got.result)
        if crash is not None:
            return _Ran(stderr=crash.stderr, failure=crash, notes=notes)
        answer = {k: v for k, v in got.result.items() if k not in (*OPENCLAW_EXTRAS, *_CANCEL_KEYS)}
        cancelled = None
        if got.result.get("cancelled") is True:
            cancelled = {k: got.result.get(k) for k in _CANCEL_KEYS}
        elif got.result.get("refused") is True:
            failure = Failed("refused", f"refused to run: {got.result.get('error')}", got.stderr)
            return _Ran(stderr=got.stderr, failure=failure, notes=notes)
        return _Ran(answer, got.stderr, cancelled=cancelled, notes=notes)

    def _run_command(
        self, spec: CommandCompactor, params: CompactParams, copy: Path, environment: dict[str, str] | None = None
    ) -> _Ran:
        from replaylab.compactors.process import run_compactor

        try:
            stdin = orjson.dumps(params_json(params))
            finished = run_compactor(
                spec.command, stdin, cwd=self.cwd, home=copy.parent, timeout_s=spec.timeout_s, environment=environment
            )
        except OSError as exc:
            kind = "not_found" if isinstance(exc, FileNotFoundError | PermissionError) else "crashed"
            return _Ran(failure=Failed(kind, f"cannot be started: {exc.strerror or exc} (cwd {self.cwd})"))
        stderr = finished.stderr.decode("utf-8", errors="replace")
        if finished.overflow:
            from replaylab.compactors.process import MAX_STDERR_BYTES, MAX_STDOUT_BYTES

            cap = MAX_STDOUT_BYTES if finished.overflow == "stdout" else MAX_STDERR_BYTES
            return _Ran(
                stderr=stderr,
                failure=Failed(
                    "too_much_output", f"wrote more than {cap >> 20} MiB to {finished.overflow}; it was ended there"
                ),
            )
        if finished.timed_out:
            return _Ran(stderr=stderr, failure=Failed("timed_out", f"was still running after {spec.timeout_s:g} s"))
        if finished.returncode != 0:
            status = finished.returncode or 0
            how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
            return _Ran(stderr=stderr, failure=Failed("crashed", how))
        try:
            answer = orjson.loads(finished.stdout)
        except orjson.JSONDecodeError as exc:
            shown = finished.stdout[:200].decode("utf-8", errors="replace")
            return _Ran(stderr=stderr, failure=Failed("invalid_json", f"printed no JSON on stdout ({exc}): {shown!r}"))
        return _Ran(answer, stderr)

    # ------------------------------------------------------------ the finding

    def _cancelled(self, params: CompactParams, copy: Path, cancel: dict[str, Any], notes: list[str]) -> CompactResult:
        """The compactor declined: COMPACTION_CANCELLED with its reason; the window stays as it was."""
        reason = str(cancel.get("reason") or "no reason given")
        cause = cancel.get("cause")
        message = scrub_text(
            f"compactor {self.name} cancelled the compaction: {reason}" + (f" ({cause})" if cause else "")
        )
        detail = {
            "compactor": self.name,
            "reason": scrub_text(reason),
            "cause": scrub_text(str(cause)) if cause else None,
            "summaryRequests": cancel.get("summaryCalls"),
            "firstKeptEntryId": cancel.get("firstKeptEntryId"),
        }
        return CompactResult(
            success=False,
            failure="cancelled",
            mode=params.compaction_mode,
            session_file=str(copy),
            working_copy=str(copy),
            error=message,
            findings=[Defect.of(Code.COMPACTION_CANCELLED, message, detail=detail)],
            notes=notes,
        )

    def _failed(self, params: CompactParams, copy: Path, failed: Failed, stderr: str) -> CompactResult:
        tail = stderr_tail(stderr)
        message = scrub_text(f"compactor {self.name} {failed.what}") + (f"; stderr ends: {tail}" if tail else "")
        detail: dict[str, Any] = {"kind": failed.kind, "compactor": self.name, "stderrTail": tail}
        if failed.field:
            detail["field"] = failed.field
        return CompactResult(
            success=False,
            mode=params.compaction_mode,
            session_file=str(copy),
            working_copy=str(copy),
            error=message,
            findings=[Defect.of(Code.COMPACTION_FAILED, message, detail=detail)],
        )


def stderr_tail(stderr: str) -> str:
    """The last `STDERR_TAIL_CHARS` of `stderr`, scrubbed before the cut (a secret the cut would
    split is still recognised whole: the scrubbed window is twice the tail)."""
    text = stderr.strip()
    if not text:
        return ""
    scrubbed = scrub_text(text[-2 * STDERR_TAIL_CHARS :])
    return scrubbed if len(scrubbed) <= STDERR_TAIL_CHARS else "…" + scrubbed[-STDERR_TAIL_CHARS:]


def compactor_under_test(
    spec: CompactorSpec | None, files: Any, cwd: Path, profile: Any = None
) -> ExternalCompactor | None:
    """The item's compactor when its plan names one (`qa.plan.CompactorChoice.spec`), run from
    the suite's folder for an item of agent `profile`; None: replaylab's own."""
    if spec is None:
        return None
    sources = SourceStates(((files.recording, files.before[0]), (files.cassette, files.before[1])))
    return ExternalCompactor(spec, sources, cwd, profile)


def bundled_worker(spec: CompactorSpec | None, profile: Any = None) -> NodeWorker | None:
    """The process's node worker a bundled agent compactor (`openclaw`, `pi`) runs on for an item
    of agent `profile` (`compactors.openclaw`, `compactors.pi_worker`); None for any other."""
    if isinstance(spec, OpenClawCompactor):
        from replaylab.compactors.openclaw import shared_worker as openclaw_worker

        return openclaw_worker()
    if isinstance(spec, PiCompactor):
        from replaylab.compactors.pi_worker import shared_worker as pi_worker
        from replaylab.oracles.pi import compactor_profile

        return pi_worker(compactor_profile(profile))
    return None


def start_worker(spec: CompactorSpec | None, profile: Any = None) -> None:
    """Starts now the worker `bundled_worker` gives, unless it runs already: its load then overlaps
    the runs before the first compaction (`NodeWorker.start`)."""
    worker = bundled_worker(spec, profile)
    if worker is not None:
        worker.start()


#: the findings a compactor adapter makes of a compaction that did not happen
NOT_COMPACTED = (Code.COMPACTION_FAILED, Code.COMPACTION_CANCELLED)


def compaction_failure(result: CompactResult) -> Defect:
    """The finding of a compaction that did not happen: the compactor adapter's own
    COMPACTION_FAILED (with its kind) or COMPACTION_CANCELLED, else one made of the result's error."""
    own = next((d for d in result.findings or [] if d.code in NOT_COMPACTED), None)
    return own or Defect.of(Code.COMPACTION_FAILED, result.error or "compact() failed")


# ------------------------------------------------------------ the working copy


def _transcript(copy: Path, writer: TranscriptWriter | None) -> Any:
    return writer.transcript() if writer is not None else load_transcript(copy)


def _state(copy: Path, writer: TranscriptWriter | None) -> tuple[int, str]:
    sealed = writer.sealed_state() if writer is not None else None
    if sealed is not None:
        return sealed
    data = copy.read_bytes()
    return len(data), hashlib.sha256(data).hexdigest()


def _keep_appended(copy: Path, writer: TranscriptWriter | None, size: int, digest: str) -> None:
    """The working copy must start with the `size` bytes it held; its writer adopts the rest."""
    rewrote = Failed("rewrote_working_copy", "rewrote the working copy instead of appending to it")
    if writer is not None:
        try:
            writer.adopt_appended()
        except (NotOwnedError, OSError):
            raise rewrote from None
        return
    try:
        with open(copy, "rb") as handle:
            kept = hashlib.sha256(handle.read(size)).hexdigest() == digest
    except OSError:
        kept = False
    if not kept:
        raise rewrote


def _measured(result: CompactResult, path: list[Any], after_path: list[Any]) -> None:
    """The token counts of the windows pi shows before and after, as replaylab estimates them
    for its own compactor: the report gives these, the compactor's figures go to the notes."""
    from replaylab.transcript.context import build_window
    from replaylab.transcript.tokens import estimate_tokens

    original = sum(estimate_tokens(w.message) for w in build_window(path))
    compacted = sum(estimate_tokens(w.message) for w in build_window(after_path))
    reported = (result.original_token_count, result.compacted_token_count)
    if reported != (original, compacted):
        result.notes.append(
            f"the compactor reported {reported[0]} → {reported[1]} tokens; the windows pi shows hold "
            f"{original} → {compacted} (pi's chars/4 estimate)"
        )
    result.original_token_count, result.compacted_token_count = original, compacted
    result.token_saved = original - compacted


def _only_restated_after(after: Any, entry_id: str) -> bool:
    """Whether every entry from the compaction `entry_id` to the working copy's leaf restates an
    earlier entry of the path with its bytes (safeguard's restated protected entries): those are
    the recording's own events again, not something the compactor made up after its summary."""
    if after.leaf_id is None:
        return False
    path = after.path_to(after.leaf_id)
    at = next((i for i, e in enumerate(path) if e.id == entry_id), None)
    if at is None:
        return False
    sources, _ = restatements(path)
    return all(e.id in sources for e in path[at + 1 :])


def _appended_entry(result: CompactResult, after: Any, before_ids: set[str]) -> None:
    """A successful answer's `compactionEventId` names the one compaction entry this call
    appended, and that entry is the working copy's leaf, or only verified restatements follow it:
    pi resumes from the last entry of the file, so an entry named but not last (a second
    compaction after it, anything else appended after it) would have replaylab judge a window the
    agent never sees."""
    entry_id = result.compaction_event_id
    entry = after.by_id.get(entry_id) if entry_id else None
    if entry_id and entry_id not in before_ids and isinstance(entry, CompactionEntry):
        appended = [e.id for e in after.entries if e.id not in before_ids and isinstance(e, CompactionEntry)]
        if len(appended) > 1:
            raise Failed(
                "contract",
                f"appended {len(appended)} compaction entries ({', '.join(appended[:5])}); one call appends one, "
                f"and pi resumes from the last ({appended[-1]}), not from the one it names ({entry_id})",
                field="compactionEventId",
            )
        if after.leaf_id != entry_id and not _only_restated_after(after, entry_id):
            raise Failed(
                "contract",
                f"names {entry_id!r}, but the working copy's leaf, where pi resumes, is {after.leaf_id!r}: "
                "it appended after its compaction entries that restate no earlier entry byte for byte",
                field="compactionEventId",
            )
        result.first_kept_entry_id = entry.first_kept_entry_id  # what the file says, not a claim
        # the context is rebuilt at the file's leaf: entries it appended after its compaction count
        leaf = after.leaf_id
        on_path = leaf is not None and any(e.id == entry_id for e in after.path_to(leaf))
        result.leaf_id = leaf if on_path else entry_id
        return
    if not entry_id:
        why = "is missing"
    elif entry_id in before_ids:
        why = f"names {entry_id!r}, an entry the working copy held before the call"
    elif entry is None:
        problems = [d.message for d in getattr(after, "diagnostics", [])][-1:]
        why = f"names {entry_id!r}, which is no entry of the working copy" + (f" ({problems[0]})" if problems else "")
    else:
        why = f"names {entry_id!r}, a {entry.type} entry, not a compaction"
    raise Failed("contract", f"answered success, but compactionEventId {why}", field="compactionEventId")
