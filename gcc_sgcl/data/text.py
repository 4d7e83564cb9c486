"""Reading numbered lines out of plain, gzip or zip-member text files, with errors that name file and line."""
from __future__ import annotations

import csv
import gzip
import io
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, TextIO


_ENCODING = "utf-8-sig"  # UTF-8, a leading byte-order mark dropped


class DataFormatError(ValueError):
    """A data file does not follow its format; the message starts with ``<file> line <n>:``."""


QUOTE_LIMIT = 200
"""The most characters of an input line (or field) an error message quotes: a 1 GiB line is cut, not printed."""


def quoted(text: str | Sequence[str], sep: str = " ", limit: int = QUOTE_LIMIT) -> str:
    """``text`` (or the tokens ``text`` joined by ``sep``) quoted for an error message: its ``repr``, cut to its first
    ``limit`` characters with an ellipsis and its length when longer (tokens are joined only that far).

    >>> quoted(["1", "x"]), quoted("ab" * 200, limit=6)
    ("'1 x'", "'ababab'... (400 characters)")
    """
    if not isinstance(text, (list, tuple)):
        text = str(text)
        head, length = text[:limit + 1], len(text)
    else:
        head, length = "", sum(map(len, text)) + len(sep) * max(len(text) - 1, 0)
        for i, token in enumerate(text):
            head += (sep if i else "") + token[:limit + 1]
            if len(head) > limit:
                break
    return repr(head) if length <= limit else f"{head[:limit]!r}... ({length} characters)"


@contextmanager
def open_text(path: Path, member: str | None = None) -> Iterator[TextIO]:
    """Open ``path`` as text: a zip ``member`` when given, gunzipped when the name ends in ``.gz`` (any case).
    A UTF-8 byte-order mark (as Excel and Notepad write) is dropped.

    A damaged file (truncated or non-gzip ``.gz``, broken zip, bytes that are not UTF-8) raises a
    :class:`DataFormatError` naming it, also when the damage is met while reading.
    """
    source = source_name(path, member)
    try:
        if member is not None:
            with zipfile.ZipFile(path) as archive:
                try:
                    raw = archive.open(member)
                except KeyError:
                    raise DataFormatError(f"{path}: zip archive has no member {member!r}") from None
                with io.TextIOWrapper(raw, encoding=_ENCODING) as f:
                    yield f
        else:
            with open_bytes(path) as raw, io.TextIOWrapper(raw, encoding=_ENCODING) as f:
                yield f
    except (EOFError, gzip.BadGzipFile, zlib.error, zipfile.BadZipFile, UnicodeDecodeError) as error:
        raise DataFormatError(f"{source}: {damage(error)}") from error


def open_bytes(path: Path) -> BinaryIO:
    """``path`` opened for reading bytes, gunzipped when the name ends in ``.gz`` (any case)."""
    return gzip.open(path, "rb") if path.suffix.lower() == ".gz" else open(path, "rb")


def damage(error: Exception) -> str:
    """What a low-level read error says about the file, for a :class:`DataFormatError` message."""
    if isinstance(error, UnicodeDecodeError):
        return (f"not UTF-8 text (byte 0x{error.object[error.start]:02x} cannot be decoded); a binary or "
                f"compressed file under a text file's name?")
    if isinstance(error, EOFError):
        return "the compressed file is truncated (it ends before its end-of-stream marker); fetch it again"
    if isinstance(error, gzip.BadGzipFile):
        return f"not a valid gzip file ({error}); fetch it again"
    if isinstance(error, zipfile.BadZipFile):
        return f"not a valid zip archive ({error}); fetch it again"
    return f"corrupt compressed data ({error}); fetch it again"


def source_name(path: Path, member: str | None = None) -> str:
    """How error messages name a file or a zip member (``archive.zip:member``)."""
    return f"{path}:{member}" if member is not None else str(path)


def split_fields(line: str) -> list[str]:
    """The fields of a line of an edge list, labels or pairs file: separated by whitespace and/or commas, empty
    fields dropped; a field in double quotes keeps its spaces and commas (``"New York","Los Angeles"``, as CSV writes
    it, ``""`` for a quote inside). A quote left open is a ``ValueError``.

    >>> split_fields("a, b,c d"), split_fields('"New York","Los Angeles",3'), split_fields('"a b" "c,d"')
    (['a', 'b', 'c', 'd'], ['New York', 'Los Angeles', '3'], ['a b', 'c,d'])
    """
    if '"' not in line:
        return [field for token in line.split() for field in token.split(",") if field]
    fields = None
    for delimiter in (",", "\t", " "):  # the first that splits the line into several fields around its quotes
        try:
            row = next(csv.reader([line], delimiter=delimiter, skipinitialspace=True, strict=True))
        except csv.Error:  # quotes that do not close before this delimiter (or at all)
            continue
        fields = [f.strip() for f in row if f.strip()]
        if len(fields) > 1:
            return fields
    if fields is None:
        raise ValueError(f"a double quote left open or inside a field (quote a field whole, \"\" for a quote "
                         f"inside it): {quoted(line)}")
    return fields


class LineReader:
    """Iterates the tokens of each non-blank line of a text stream (``line_number`` tracks where it is) and
    builds errors located at that line.

    Lines starting with one of ``comments`` are skipped. ``sep=None`` splits on any whitespace; a string
    splits on exactly that separator (e.g. ``"\\t"`` for fields that contain spaces).

    >>> r = LineReader(io.StringIO("# c\\n3 4\\n\\n5\\n"), "f.txt", comments=("#",))
    >>> r.next("'u v'")
    ['3', '4']
    >>> r.ints(r.next("'u'"), "'u'")
    [5]
    """

    def __init__(self, stream: TextIO, source: str, comments: tuple[str, ...] = (), sep: str | None = None,
                 split: Callable[[str], list[str]] | None = None):
        self.source = source
        self.line_number = 0
        self._stream = stream
        self._comments = comments
        self._sep = sep
        self._split = split

    def __iter__(self) -> Iterator[list[str]]:
        """The tokens of each line: split at ``sep``, or by ``split`` (e.g. :func:`split_fields`; its
        ``ValueError`` becomes an error at the line)."""
        for line in self._stream:
            self.line_number += 1
            stripped = line.strip() if self._sep is None else line.rstrip("\r\n")
            if not stripped.strip() or (self._comments and stripped.startswith(self._comments)):
                continue
            if self._split is None:
                yield stripped.split(self._sep)
                continue
            try:
                fields = self._split(stripped)
            except ValueError as error:
                raise self.error(str(error)) from None
            yield fields

    def next(self, expected: str) -> list[str]:
        """Tokens of the next non-blank line; a truncated file raises naming what was ``expected``."""
        for tokens in self:
            return tokens
        raise self.error(f"expected {expected}, got end of file", line_number=self.line_number + 1)

    def expect_end(self, after: str) -> None:
        """Raise at the first non-blank line left, if any (``after`` says what should have been last)."""
        for tokens in self:
            raise self.error(f"expected end of file after {after}, got {quoted(tokens)}")

    def error(self, message: str, line_number: int | None = None) -> DataFormatError:
        """A :class:`DataFormatError` located at the current (or the given) line."""
        return DataFormatError(f"{self.source} line {line_number or self.line_number}: {message}")

    def ints(self, tokens: list[str], expected: str, count: int | None = None) -> list[int]:
        """``tokens`` as integers (exactly ``count`` of them when given), else an error naming ``expected``."""
        if count is not None and len(tokens) != count:
            raise self.error(f"expected {expected}, got {quoted(tokens, self._sep or ' ')}")
        try:
            return list(map(int, tokens))
        except ValueError:
            raise self.error(f"expected {expected}, got {quoted(tokens, self._sep or ' ')}") from None

    def check_range(self, values: list[int], upper: int, what: str) -> None:
        """Raise unless every value lies in ``[0, upper)``."""
        for v in values:
            if not 0 <= v < upper:
                raise self.error(f"{what} {v} out of range [0, {upper})")
