"""Files under one root: atomic writes, reads that name the corrupt file, and a fence that
refuses any path leading outside the root (symlinks included)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from pathlib import Path
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from noisefloor.errors import CorruptFile, StoreError

__all__ = [
    "FULL_ERRNOS",
    "RootedFiles",
    "dumps",
    "not_a_file",
    "remove_not_a_file",
    "write_failure",
]

M = TypeVar("M", bound=BaseModel)

#: The errors of a write that found no room: a full disk or quota, or the file-size limit.
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})

_FULL_HINT = (
    "free space, or move the store with --root; every sample written so far is kept, and the "
    "next run takes only the missing ones"
)


def write_failure(what: str, reason: str) -> StoreError:
    """The error of a write that found no room: `reason` (the system's words) writing `what`."""
    return StoreError(f"{reason} writing {what}", hint=_FULL_HINT)


def dumps(obj: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, indented, newline-terminated (stable for md5 checks)."""
    if isinstance(obj, BaseModel):
        obj = obj.model_dump(mode="json")
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def not_a_file(path: Path | str) -> bool:
    """Whether something is at `path` that no read can open as a file: a directory, or a
    symlink that leads nowhere (dangling, or a loop)."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:
        return os.path.islink(path)
    except OSError:  # a symlink loop, or a name too long to resolve
        return True


def remove_not_a_file(path: Path | str) -> bool:
    """Remove what stands where a file belongs but is none (`not_a_file`); True if it did.
    A symlink goes, never what it points to; a directory goes with what it holds."""
    if not not_a_file(path):
        return False
    if os.path.islink(path):
        os.unlink(path)
    else:
        shutil.rmtree(path)
    return True


class RootedFiles:
    """Reads and atomic writes of the files under `root`; nothing is written outside it."""

    def __init__(self, root: Path | str) -> None:
        # normalised, so that the fence below can compare strings
        self.root = Path(os.path.abspath(root))
        self._root_prefix = os.path.join(str(self.root), "")
        self._ready_dirs: set[str] = set()
        self.write_error: StoreError | None = None
        """The latest write that found no room (a full disk, the file-size limit), kept for
        code that only sees its consequences (a failed doit task)."""

    def _is_inside(self, real: str) -> bool:
        root = os.path.realpath(self.root)
        return real == root or real.startswith(os.path.join(root, ""))

    def _ready_dir(self, directory: str) -> None:
        """Make `directory` exist, refusing one that is (or leads) outside the root.

        A lexical check, then one mkdir per new directory: a directory this store creates is
        real and inside its verified parent. Only one found already there is resolved, since a
        symlink inside the root may point anywhere. Each is checked once per store object (a
        run writes thousands of files into a few hundred directories).
        """
        if directory in self._ready_dirs:
            return
        if directory != str(self.root):
            if not directory.startswith(self._root_prefix):
                raise StoreError(
                    f"refusing to touch {directory}: it is outside the store root {self.root}"
                )
            self._ready_dir(os.path.dirname(directory))
            try:
                os.mkdir(directory)
            except FileExistsError:
                if os.path.islink(directory) and not self._is_inside(os.path.realpath(directory)):
                    raise StoreError(
                        f"refusing to touch {directory}: it leads outside the store root "
                        f"{self.root}"
                    ) from None
        else:
            # the root itself may be a symlink: where it points is the user's choice
            os.makedirs(directory, exist_ok=True)
        self._ready_dirs.add(directory)

    def rel(self, path: Path) -> str:
        """A path relative to the root, with forward slashes, for records."""
        return path.relative_to(self.root).as_posix()

    def abs(self, rel: str) -> Path:
        """The absolute path of a record-relative path, refusing anything that escapes the root.

        A lexical check (no `..`, not absolute): records name thousands of paths, and resolving
        each costs syscalls per component. Writes still resolve, symlinks included.
        """
        return Path(self.abs_str(rel))

    def abs_str(self, rel: str) -> str:
        """`abs` as a plain string: a no-op check asks for thousands, and pathlib's parsing of
        each took longer than the check's every other step on them."""
        parts = [part for part in rel.split("/") if part not in ("", ".")]
        if not parts or rel.startswith("/") or ".." in parts:
            raise StoreError(
                f"refusing record path {rel!r}: it is outside the store root {self.root}"
            )
        return self._root_prefix + rel

    def write_bytes(self, path: Path, data: bytes) -> None:
        """Write atomically: a temporary file in the same directory, then rename.

        A reader sees the old file or the whole new one, and a killed process (SIGKILL
        included) leaves no partial file. There is no fsync: it cost ~2 ms per file here, more
        than launching a small command, and it only guards against the machine itself going
        down. A sample the kernel had not flushed then reads back empty, which counts as
        missing (`has_sample`), so it is taken again. A write that finds no room (a full disk,
        the file-size limit) raises a StoreError that names the file and says what to do.
        """
        if ".." in path.parts:
            raise StoreError(f"refusing to touch {path}: it is outside the store root {self.root}")
        try:
            self._write_atomically(str(path), data)
        except OSError as exc:
            if exc.errno not in FULL_ERRNOS:
                raise
            raise self._no_room(path, exc) from None

    def _no_room(self, path: Path, exc: OSError) -> StoreError:
        """The StoreError of a write of `path` that found no room, kept as `write_error`."""
        shown = str(path)
        if shown.startswith(self._root_prefix):
            shown = f"{shown[len(self._root_prefix) :]} under {self.root}"
        self.write_error = write_failure(shown, (exc.strerror or str(exc)).lower())
        return self.write_error

    def _write_atomically(self, target: str, data: bytes) -> None:
        directory, name = os.path.split(target)
        self._ready_dir(directory)
        tmp = os.path.join(directory, f".{name}.{os.getpid()}.{id(data):x}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileNotFoundError:
            # removed since this store made it (a cache cleaned up meanwhile): make it again,
            # with whichever of its parents went too
            self._ready_dirs.clear()
            self._ready_dir(directory)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise

    def write_json(self, path: Path, obj: Any) -> None:
        """Write canonical JSON atomically."""
        self.write_bytes(path, dumps(obj))

    def read_json(self, path: Path) -> Any:
        """Parse one JSON file, turning corruption into a StoreError that names the file."""
        try:
            return orjson.loads(path.read_bytes())
        except FileNotFoundError:
            if os.path.islink(path):  # a symlink that leads nowhere
                raise CorruptFile(
                    f"unreadable file {self._show(path)}: a dangling symlink",
                    path,
                    hint=self.corrupt_hint(path),
                ) from None
            raise StoreError(f"missing file {self._show(path)}") from None
        except OSError as exc:  # a directory in its place, a symlink loop
            raise CorruptFile(
                f"unreadable file {self._show(path)}: {exc.strerror or exc}",
                path,
                hint=self.corrupt_hint(path),
            ) from None
        except orjson.JSONDecodeError as exc:
            raise CorruptFile(
                f"corrupt file {self._show(path)}: {exc}", path, hint=self.corrupt_hint(path)
            ) from None

    def corrupt_hint(self, path: Path) -> str:
        """What to do about the corrupt file `path`."""
        return "delete it; samples are re-taken and derived files rebuilt on the next run"

    def read_model(self, path: Path, model: type[M]) -> M:
        """Read and validate one record."""
        data = self.read_json(path)
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            raise CorruptFile(
                f"corrupt or foreign record {self._show(path)}: {where}: {first['msg']}",
                path,
                hint=self.corrupt_hint(path),
            ) from None

    def _show(self, path: Path) -> str:
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)
