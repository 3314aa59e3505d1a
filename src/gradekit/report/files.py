"""The files of a run: where its reports are written, atomically, and the files it is read
back from.

Where a report may be written: a regular file (or a symlink to one), never a device, a FIFO,
a socket or a folder, in a folder that exists or can be made and that takes new files.

`target(path)` is the file to replace (a symlink's target: reports are written through
symlinks, and the link stays; a dangling symlink only into a folder that exists: no folder is
made where a link leads). `probe(path)` checks all the rest by making the folders and a
temporary file there, so the command line can refuse a bad path before grading anything. Both
raise `WriteError` with a reason a user can act on. `atomic_text(path)` writes one
atomically: readers see the old file or the whole new one, never a part.

The files a run is read back from (`--resume`, `--baseline`, `--rerun-failed`, `compare`)
are opened only when they are regular files (`open_regular`), read in bounded memory.

A FIFO would block the open (or the read) until a writer came, a device such as /dev/zero
never ends, a folder is no file: each is refused naming the path and what it is, before a
byte is read. A case (a line of a results log, an item of a JSON report) longer than
`MAX_CASE_BYTES` is refused too, so a file of one endless line costs that much memory at
most, not the file's size.

Writing the reports of one run in several formats at once: every one is tried, and each is
written whole or not at all (`gradekit run -o r.json --junit r.xml ...`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from importlib import import_module
from pathlib import Path
from typing import Any, BinaryIO, Final, Protocol, TextIO

from gradekit.core.errors import ConfigError, WriteError
from gradekit.core.scratch import scratch_prefix, sweep
from gradekit.core.values import REPLACE_SURROGATES
from gradekit.report.model import CaseReport, SuiteReport

__all__ = [
    "FORMATS",
    "MAX_CASE_BYTES",
    "CaseSource",
    "Watch",
    "atomic_text",
    "creation_error",
    "kind_of",
    "make_folder",
    "open_regular",
    "probe",
    "target",
    "temp_prefix",
    "too_long",
    "write_reports",
    "writer_of",
]


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a file of `st_mode` `mode` is, in words (`a FIFO (named pipe)`, `a folder`); `a
    regular file` for one."""
    for test, what in _KINDS:
        if test(mode):
            return what
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def temp_prefix(final: Path) -> str:
    """The name prefix of the temporary file that becomes `final` (hidden, with our pid)."""
    return f".{final.name}.{scratch_prefix('tmp')}"


def target(path: str | os.PathLike[str]) -> Path:
    """The file a report at `path` replaces: `path`, or the file its symlinks lead to.

    Raises WriteError when that is not a regular file (nor missing).
    """
    given = Path(path)
    final = Path(os.path.realpath(given))
    try:
        mode = os.stat(final).st_mode
    except (FileNotFoundError, NotADirectoryError):  # `make_folder` says why, if it must
        return final
    except OSError as error:
        raise WriteError(str(given), error.strerror or str(error)) from error
    for test, what in _KINDS:
        if test(mode):
            leads = f"it leads to {final}, which is" if final != given.absolute() else "it is"
            raise WriteError(str(given), f"{leads} {what}, not a file", "give the path of a file")
    return final


def make_folder(path: str | os.PathLike[str], final: Path) -> None:
    """Create the folders of `final` (the report at `path`), or say why they cannot be.

    Folders are made only on the path as written: never where a dangling symlink on it leads
    (a link to a file not made yet, in a folder that exists, is written through)."""
    folder = final.parent
    if not folder.is_dir():
        _refuse_dangling(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as error:
        blocker = _file_among_parents(Path(path).parent) or _file_among_parents(folder)
        reason = f"{blocker} is a file, not a folder" if blocker else str(error.strerror)
        raise WriteError(str(path), reason, "choose another path") from error
    except OSError as error:
        raise creation_error(path, _existing(folder), error) from error


def probe(path: str | os.PathLike[str]) -> None:
    """Check that a report can be written at `path` (making its folders): raise WriteError
    saying why not. Leaves nothing behind but the folders."""
    final = target(path)
    make_folder(path, final)
    try:
        fd, temp = tempfile.mkstemp(prefix=temp_prefix(final), suffix=".tmp", dir=final.parent)
    except OSError as error:
        raise creation_error(path, final.parent, error) from error
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(temp)


def creation_error(path: str | os.PathLike[str], folder: Path, error: OSError) -> WriteError:
    """The WriteError for a file or folder that could not be created in `folder` (a folder
    that exists)."""
    cause = error.strerror or str(error)
    if error.errno in (errno.ENOENT, errno.EPERM, errno.EINVAL) and folder.is_dir():
        # /proc, /sys and their kin exist but refuse new files with a misleading errno.
        return WriteError(
            str(path),
            f"the folder {folder} does not take new files ({cause}): it is a virtual file "
            "system such as /proc or /sys",
            "write the report elsewhere",
        )
    if error.errno == errno.EROFS:
        return WriteError(
            str(path), f"{folder} is on a read-only file system", "choose another path"
        )
    if error.errno == errno.EACCES:
        return WriteError(
            str(path), f"permission denied in {folder}", "choose a folder you may write to"
        )
    if error.errno == errno.ENOSPC:
        return WriteError(str(path), cause, "free some space on that disk, or choose another path")
    return WriteError(str(path), f"{cause} (in {folder})")


def _refuse_dangling(path: str | os.PathLike[str]) -> None:
    """WriteError when `path`, or a folder on the way to it, is a symlink that leads nowhere:
    making the folders it leads to would write where the path does not say."""
    given = Path(path)
    parts = given.parts
    for end in range(1, len(parts) + 1):
        step = Path(*parts[:end])
        if not os.path.lexists(step):
            return  # nothing further exists, so no further link
        if os.path.islink(step) and not os.path.exists(step):
            leads = os.readlink(step)
            if end == len(parts):
                reason = f"it is a symlink to {leads}, whose folder does not exist"
                hint = "create that folder, or give another path"
            else:
                reason = f"{step} is a symlink to {leads}, which does not exist"
                hint = "create it, or give another path"
            raise WriteError(str(path), reason, hint)


def _existing(folder: Path) -> Path:
    """The nearest folder among `folder` and its parents that exists."""
    for parent in (folder, *folder.parents):
        if parent.exists():
            return parent
    return folder


def _file_among_parents(folder: Path) -> Path | None:
    for parent in (folder, *folder.parents):
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


@contextlib.contextmanager
def atomic_text(path: str | os.PathLike[str]) -> Iterator[TextIO]:
    """Yield a text file that replaces `path` when the block ends without an error.

    The temporary file sits in the same folder (so the final rename never crosses file
    systems), is fsynced, then renamed over `path`. A symlink is written through: its target
    is replaced, the link stays. A device, FIFO, socket or folder at `path` is never replaced
    (WriteError). On an error the temporary file is removed and `path` is left as it was;
    a write that fails (a full disk) raises WriteError naming the path and the cause. Missing
    parent folders are created. Temporary files that killed runs left in the folder are
    removed first.
    """
    final = target(path)
    make_folder(path, final)
    sweep(final.parent)
    try:
        fd, temp = tempfile.mkstemp(prefix=temp_prefix(final), suffix=".tmp", dir=final.parent)
    except OSError as error:
        raise creation_error(path, final.parent, error) from error
    try:
        text = os.fdopen(fd, "w", encoding="utf-8", errors=REPLACE_SURROGATES, newline="\n")
        with text as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        # mkstemp creates the file 0600; a report is an ordinary file for its reader.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)
        os.replace(temp, final)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(error, WriteError):
            raise
        raise WriteError(str(path), error.strerror or str(error), _hint(error)) from error
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _hint(error: OSError) -> str:
    import errno

    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return "free some space on that disk, or choose another path"
    return "check the path"


MAX_CASE_BYTES: Final = 64 << 20
"""The longest case read back (its JSON text), in bytes: 64 MiB. gradekit writes a case's
texts cut at `--max-text` (4 KiB by default), so a real case is far shorter."""


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` open for reading in binary, when it is a regular file (or a symlink to one);
    ConfigError naming it otherwise (missing, unreadable, a FIFO, a device, a folder)."""
    shown = os.fspath(path)
    try:
        # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise ConfigError(
            f"cannot read {shown}: {error.strerror or error}; check the path"
        ) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ConfigError(
                f"cannot read {shown}: it is {kind_of(mode)}, not a file; give the path of a "
                "JSON report or a results log"
            )
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def too_long(path: Path, line: int) -> ConfigError:
    """The error of a case longer than `MAX_CASE_BYTES` at `line` of `path`."""
    return ConfigError(
        f"{path}:{line}: a case longer than {MAX_CASE_BYTES >> 20} MiB; this file is not a "
        "gradekit report or results log (or was damaged): give another file"
    )


FORMATS: Final[dict[str, str]] = {
    "json": "write_json",
    "junit": "write_junit",
    "markdown": "write_markdown",
    "html": "write_html",
}
"""Each format's writer, `writer(report, path, cases=None)`, by its name in `gradekit.report`
(which imports a writer's module only when the writer is first asked for)."""


def writer_of(form: str) -> Callable[..., None]:
    """The writer of the format `form` (a key of FORMATS)."""
    writer: Callable[..., None] = getattr(import_module("gradekit.report"), FORMATS[form])
    return writer


class CaseSource(Protocol):
    """Where a run's cases can be read back in suite order (`gradekit.ResultsLog`)."""

    def cases(self) -> Iterator[CaseReport]:
        """Every case, parsed."""

    def case_texts(self) -> Iterator[str]:
        """Every case's JSON text, as the JSON report holds it."""

    def failing(self) -> Iterator[CaseReport]:
        """Every case that did not pass, parsed (the passing ones are not read)."""


Watch = Callable[[str, int], contextlib.AbstractContextManager[Callable[[], None]]]
"""`watch(path, total)`: the context in which the report at `path` (of `total` cases) is
written; it yields a function called once per case written (`ReportsProgress.writing`)."""


def _counted(cases: Iterable[Any], tick: Callable[[], None]) -> Iterator[Any]:
    for case in cases:
        tick()
        yield case


def write_reports(
    report: SuiteReport,
    targets: Iterable[tuple[str, str | os.PathLike[str]]],
    source: CaseSource | None = None,
    *,
    watch: Watch | None = None,
) -> list[WriteError]:
    """Write `report` as each `(format, path)` of `targets` (formats: see FORMATS).

    The cases come from `source` when given (streamed, for runs too large to hold), else from
    `report.cases`. A target that cannot be written does not stop the others: the failures
    are returned, one WriteError each, naming the path and the cause. `watch`, when given,
    sees each report written (its start, each case, its end).
    """
    failures = []
    summary = report.summary
    for form, path in targets:
        cases: Any = None
        total = summary.cases
        if source is not None:
            if form == "json":  # the log's lines are the report's items: copied as they are
                cases = source.case_texts()
            elif form == "markdown":  # it lists only the cases that did not pass
                cases, total = source.failing(), summary.failed + summary.errored
            else:
                cases = source.cases()
        try:
            if watch is None:
                writer_of(form)(report, path, cases)
                continue
            items = report.cases if cases is None else cases
            with watch(os.fspath(path), total) as tick:
                writer_of(form)(report, path, _counted(items, tick))
        except WriteError as error:
            failures.append(error)
    return failures
