"""File helpers every loader shares: capped reads, text decoding, document ids, front matter, sidecars.

The text, HTML, PDF and reStructuredText loaders all read a file through ``read_capped`` (an
``InputError`` over the size cap), name it with ``document_id`` and merge their sidecar with
``with_sidecar``; the text-based ones decode with ``decode_text`` (BOM, UTF-8, else the encoding
charset-normalizer detects). They live below ``loaders.py`` so that the loaders it dispatches to need
not import it.

A file's ACL may come from two places: its own metadata (front matter, ``<meta name="acl">``, an
reStructuredText field) and its sidecar. Where they disagree, or where the file's own metadata gives a
key twice with different values, the file is a ``MetadataError`` naming both (fail closed: a sidecar
cannot widen an ACL silently, and neither can a second tag). Front matter YAML is parsed with bounds:
aliases may add at most ``MAX_ALIAS_NODES`` nodes (a "billion laughs" bomb is refused before it is
expanded), a self-referring alias and nesting deeper than Python's recursion limit are refused.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

from ragline.errors import InputError, MetadataError

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
MAX_ALIAS_NODES = 10_000  # nodes YAML aliases may add to front matter when expanded
MAX_FLOW_DEPTH = 64  # [ and { nested in front matter (PyYAML scans nested flow collections in quadratic time)
_FLOW = re.compile(r"[\[\]{}]")
SIDECAR_SUFFIX = ".meta.json"
# The opening line, the YAML, and the closing line (``---`` or YAML's ``...``) of front matter; LF or CRLF.
_FRONT_MATTER_OPEN = re.compile(r"---[ \t]*\r?\n")
_FRONT_MATTER_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)  # UTF-32 first: its little-endian BOM starts with UTF-16's


def read_capped(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of a file, or ``InputError`` when it is over ``max_bytes`` or cannot be read."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError(str(path), f"{size:,} bytes is over the size cap of {max_bytes:,} (raise --max-file-mb)")
        return path.read_bytes()
    except OSError as error:
        raise InputError(str(path), f"cannot read: {error.strerror or error}") from None


def decode_text(data: bytes, where: str) -> tuple[str, str | None]:
    """The text of a file's bytes and the encoding used (None for UTF-8), or ``InputError``.

    A UTF-16/32 byte order mark first (such text holds NUL bytes); else a NUL byte anywhere means binary;
    then UTF-8 (BOM or not); else charset-normalizer's best guess (none: no encoding decodes the bytes into
    plausible text).
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding), encoding
            except UnicodeDecodeError as error:
                raise InputError(
                    where,
                    f"starts with a {encoding} byte order mark but is not {encoding} (byte {error.start}); "
                    "convert it to UTF-8",
                ) from None
    if b"\x00" in data:  # the whole file: a NUL past the first block is still binary
        raise InputError(where, "looks binary (contains NUL bytes); skipped")
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        pass
    encoding = detect_encoding(data)
    if encoding is None:
        raise InputError(where, "not UTF-8, and no other encoding decodes it into plausible text; convert it to UTF-8")
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as error:
        raise InputError(where, f"not valid {encoding} (byte {error.start}); convert it to UTF-8") from None


def detect_encoding(data: bytes) -> str | None:
    """The encoding charset-normalizer finds most plausible for ``data``, or None.

    On a tie (short text: several single-byte encodings decode it with the same plausibility) Windows-1252
    wins when it is among them: it is what undeclared Western text most often is (browsers assume it too).
    """
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data))
    if not matches:
        return None
    best = matches[0]
    for match in matches:
        if (match.chaos, match.coherence) != (best.chaos, best.coherence):
            continue
        if "cp1252" in match.could_be_from_charset:
            return "cp1252"
    return best.encoding


def printable_path(path: Path | str) -> str:
    """``path`` as text that can be printed and stored: bytes that are not UTF-8 appear as ``\\xe9``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def utf8_name_error(path: Path, kind: str = "file") -> InputError | None:
    """An ``InputError`` when ``path``'s name is not valid UTF-8 (it could be no document id), else None."""
    try:
        path.name.encode("utf-8")
    except UnicodeEncodeError:
        return InputError(printable_path(path), f"the {kind} name is not valid UTF-8; rename it to index it")
    return None


def document_id(relative: Path) -> str:
    """A file's document id: its path under the indexed folder, without the extension (``a/b.md`` -> ``a/b``)."""
    return relative.with_suffix("").as_posix()


def split_front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    """YAML front matter (between two ``---`` lines at the top, LF or CRLF) and the rest of the text.

    A ``MetadataError`` when the YAML is invalid, is not a mapping, or is never closed.
    """
    text_start = 1 if text.startswith("\ufeff") else 0  # a BOM that the decoder left
    opening = _FRONT_MATTER_OPEN.match(text, text_start)
    if not opening:
        return {}, text
    closing = _FRONT_MATTER_CLOSE.search(text, opening.end())
    if not closing:
        raise MetadataError(
            where, "front matter opened by '---' on the first line is never closed: add a closing '---' line"
        )
    meta = bounded_yaml(text[opening.end() : closing.start()], where) or {}
    if not isinstance(meta, dict):
        raise MetadataError(where, "front matter must be a mapping of keys to values; not indexed until it is fixed")
    return {str(k): _plain(v) for k, v in meta.items()}, text[closing.end() :]


def bounded_yaml(
    text: str,
    where: str,
    what: str = "front matter",
    consequence: str = "not indexed until it is fixed",
    first_line: int = 2,
) -> Any:
    """``text`` as YAML (safe types), refusing what would cost unbounded memory or is ambiguous.

    A ``MetadataError`` when the YAML is invalid, nests deeper than the parser's recursion allows, has
    aliases that would add more than ``MAX_ALIAS_NODES`` nodes once expanded (or refer to themselves),
    or gives a key twice in one mapping (plain PyYAML keeps the last: a second ``acl`` would replace
    the first), or nests ``[``/``{`` deeper than ``MAX_FLOW_DEPTH`` (checked first: PyYAML's scanner
    takes time quadratic in that depth). The node graph is checked before any value is built, so a bomb
    never expands. ``what`` names the text in messages (a principals file, say) and ``consequence`` says what
    happens until it is fixed; ``first_line`` is the file's line of the text's first line (front matter: 2, after the
    opening ``---``).
    """
    if _flow_depth(text) > MAX_FLOW_DEPTH:
        raise MetadataError(where, f"{what} nests [ ] or {{ }} deeper than {MAX_FLOW_DEPTH} levels; {consequence}")
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_nodes(node, where, what, consequence, first_line)
        return loader.construct_document(node)
    except yaml.YAMLError as error:
        raise MetadataError(where, f"{what} is not valid YAML ({error}); {consequence}") from None
    except RecursionError:
        raise MetadataError(where, f"{what} nests too deeply to parse; {consequence}") from None
    finally:
        loader.dispose()


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook`` that refuses a key given twice in one object (plain ``json`` keeps
    the last: a second ``acl`` would replace the first); the ``ValueError`` names the key."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key!r} is given twice in one object; keep one")
        found[key] = value
    return found


def _flow_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in ``text``, quotes not skipped (never less than the YAML's own)."""
    depth = deepest = 0
    for match in _FLOW.finditer(text):
        if match.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(depth - 1, 0)
    return deepest


def _check_nodes(root: yaml.Node, where: str, what: str, consequence: str, first_line: int) -> None:
    """Refuse repeated keys, self-referring aliases and alias expansion past ``MAX_ALIAS_NODES`` (iteratively)."""
    expanded: dict[int, int] = {}  # id(node) -> its node count with every alias expanded
    distinct: set[int] = set()
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        children = _children(node)
        if children_done:
            open_nodes.discard(key)
            expanded[key] = 1 + sum(expanded[id(child)] for child in children)
            if expanded[key] - len(distinct) > MAX_ALIAS_NODES:
                raise MetadataError(
                    where,
                    f"{what} YAML aliases expand to over {MAX_ALIAS_NODES:,} values (an alias bomb?); "
                    f"write the values out; {consequence}",
                )
            continue
        if key in expanded:
            continue
        if key in open_nodes:
            raise MetadataError(where, f"{what} has a YAML alias that refers to itself; {consequence}")
        open_nodes.add(key)
        distinct.add(key)
        if isinstance(node, yaml.MappingNode):
            _check_keys(node, where, what, consequence, first_line)
        stack.append((node, True))
        stack.extend((child, False) for child in children)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _check_keys(node: yaml.MappingNode, where: str, what: str, consequence: str, first_line: int) -> None:
    seen: dict[tuple[str, str], int] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        line = key_node.start_mark.line + first_line
        first = seen.setdefault((key_node.tag, key_node.value), line)
        if first != line:
            raise MetadataError(
                where,
                f"{what} gives the key {key_node.value!r} twice (lines {first} and {line}); keep one; {consequence}",
            )


def acl_groups(value: Any) -> frozenset[str]:
    """The groups an ``acl`` value names (a list, one name, or none), as the ACL filter reads it."""
    values = value if isinstance(value, (list, tuple)) else () if value is None else (value,)
    return frozenset(str(v) for v in values)


def field_value(key: str, text: str) -> Any:
    """A metadata value given as text (an HTML ``<meta>``, a reStructuredText field): ``acl`` a list split on
    commas, a whole number an int, else the text."""
    if key == "acl":
        return [group.strip() for group in text.split(",") if group.strip()]
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def set_once(metadata: dict[str, Any], key: str, value: Any, where: str, what: str) -> None:
    """``metadata[key] = value``; a ``MetadataError`` naming ``what`` when the file gave ``key`` before, differently."""
    if key in metadata:
        old = metadata[key]
        if (acl_groups(old) != acl_groups(value)) if key == "acl" else old != value:
            raise MetadataError(
                where,
                f"{what} is given twice with different values ({old!r} and {value!r}); keep one "
                "(not indexed until then)",
            )
    metadata[key] = value


def with_sidecar(metadata: dict[str, Any], path: Path, embedded: str) -> dict[str, Any]:
    """``metadata`` read from the file itself (``embedded`` says from where) updated by its sidecar's.

    The sidecar's keys win, except that an ``acl`` both give differently is a ``MetadataError`` naming
    both sources: the file is not indexed until they agree (fail closed, never the wider ACL).
    """
    sidecar = sidecar_metadata(path)
    if "acl" in metadata and "acl" in sidecar and acl_groups(metadata["acl"]) != acl_groups(sidecar["acl"]):
        raise MetadataError(
            str(path),
            f"its {embedded} gives acl {metadata['acl']!r} but {path.name}{SIDECAR_SUFFIX} gives acl "
            f"{sidecar['acl']!r}; make them agree or keep one (not indexed until then)",
        )
    metadata.update(sidecar)
    return metadata


def _plain(value: Any) -> Any:
    """YAML dates become ISO strings, so metadata stays JSON and compares as text."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def sidecar_metadata(path: Path) -> dict[str, Any]:
    """Metadata from ``<file>.meta.json`` next to ``path`` (every loader honours it; {} when absent).

    A ``MetadataError`` when it cannot be read or parsed: the file is then not indexed (fail closed).
    """
    sidecar = path.with_name(path.name + SIDECAR_SUFFIX)
    if not sidecar.is_file():
        return {}
    try:
        meta = json.loads(sidecar.read_text("utf-8"), object_pairs_hook=unique_keys)
    except (OSError, UnicodeDecodeError, ValueError) as error:  # ValueError: JSONDecodeError, a repeated key
        raise MetadataError(
            str(sidecar), f"cannot read sidecar metadata ({error}); {path.name} is not indexed until it is fixed"
        ) from None
    if not isinstance(meta, dict):
        raise MetadataError(str(sidecar), f"sidecar metadata must be a JSON object; {path.name} is not indexed")
    return meta
