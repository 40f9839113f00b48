"""Read a YAML file people bring (a venue file, the risk policy, a ground's checklist) and check it.

One reader for all of them, so each refuses a bad file the same way:

- the loader is a SafeLoader (a file can never build Python objects) that keeps the line of each
  mapping, key and list item, and refuses a key given twice (PyYAML would keep the last silently);
- the limits below hold for every file, so a wrong or hostile one is refused within seconds, in
  bounded memory, with an error naming the limit it broke;
- `Check` collects every problem, not just the first, as `FILE:LINE: KEY: message` (for example
  `venue.yaml:14: blocks[3].capacity: must be a whole number, got 'abc'`), so whoever keeps the
  file can fix it in one pass. Its readers return None for a bad value.

Each file's own reader (`venues/venue_file/`, `matches/policy.py`, `deployment/checklist.py`)
says what the file holds; this module says how a YAML file is read.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from safeground.errors import FileRefused
from safeground.languages import other_languages

# The demo's London Stadium, about 57,000 seats, is a 30 kB venue file; the default risk policy
# and checklist are a few kB.
MAX_FILE_BYTES = 500_000
MAX_ALIASES = 100  # YAML aliases (*name)
MAX_NODES = 200_000  # YAML values, each alias counted as every value it repeats
MAX_DEPTH = 50  # lists and mappings inside one another (PyYAML composes them by recursion)
MAX_ITEMS = 1_000  # items in any one list a reader takes through `Check.items`


def yaml_text(*, path: Path, refused: type[FileRefused], what: str) -> str:
    """The file's text, read no further than the size limit. `what` names the file in the
    error ("a venue file")."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise refused([_too_big(str(path), what)])
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise refused([f"{path}: cannot read the file: {error}"]) from error


def yaml_load(*, text: str, filename: str, refused: type[FileRefused], what: str) -> Any:
    """The document, its mappings and lists carrying their lines; `refused` if it is not YAML
    or breaks a limit."""
    if len(text) > MAX_FILE_BYTES:
        raise refused([_too_big(filename, what)])
    try:
        return yaml.load(text, Loader=LineLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else 1
        raise refused([f"{filename}:{line}: not valid YAML: {error.problem}"]) from error
    except yaml.YAMLError as error:
        raise refused([f"{filename}:1: not valid YAML: {error}"]) from error


def _shown(number: float) -> str:
    return f"{number:g}" if isinstance(number, float) else str(number)


def _too_big(filename: str, what: str) -> str:
    return f"{filename}: the file is over {MAX_FILE_BYTES:,} bytes, {what}'s limit"


# --- YAML with line numbers ---------------------------------------------------------------------


class Mapping(dict[Any, Any]):
    """A YAML mapping that knows its own line and the line of each key (1-based)."""

    line: int
    key_lines: dict[Any, int]


class Sequence(list[Any]):
    """A YAML sequence that knows its own line and the line of each item (1-based)."""

    line: int
    item_lines: list[int]


class LineLoader(yaml.SafeLoader):
    """SafeLoader that keeps line numbers, so each error can point at the line to fix.

    It counts what it composes: more than MAX_ALIASES aliases, more than MAX_NODES values with
    each alias counted as all the values it repeats, or lists and mappings nested deeper than
    MAX_DEPTH, is refused as it is read. An alias bomb (aliases of aliases, a billion values
    from a few lines) never grows, and `[[[[...` never exhausts Python's stack."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nodes = 0
        self._aliases = 0
        self._depth = 0
        self._sizes: dict[int, int] = {}  # id(node) -> the values it holds, itself included

    def compose_node(self, parent: Any, index: Any) -> Any:
        mark = self.peek_event().start_mark
        alias = self.check_event(yaml.AliasEvent)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise yaml.composer.ComposerError(
                None, None, f"more than {MAX_DEPTH} lists or mappings inside one another", mark
            )
        before = self._nodes
        node = super().compose_node(parent, index)
        self._depth -= 1
        if alias:
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise yaml.composer.ComposerError(
                    None, None, f"more than {MAX_ALIASES} aliases (*name), the limit", mark
                )
            self._nodes += self._sizes.get(id(node), 1)
        else:
            self._nodes += 1
            self._sizes[id(node)] = self._nodes - before
        if self._nodes > MAX_NODES:
            raise yaml.composer.ComposerError(
                None, None, f"more than {MAX_NODES:,} values (aliases expanded), the limit", mark
            )
        return node


def _construct_mapping(loader: LineLoader, node: yaml.MappingNode) -> Iterator[Mapping]:
    mapping = Mapping()
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    yield mapping
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node)
        try:
            seen = key in mapping.key_lines
        except TypeError:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping",
                node.start_mark,
                "a key must be text",
                key_node.start_mark,
            ) from None
        # PyYAML keeps the last of two equal keys without a word; a typo must not hide a value.
        if seen:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping",
                node.start_mark,
                f"{key!r} is given twice (first on line {mapping.key_lines[key]})",
                key_node.start_mark,
            )
        mapping.key_lines[key] = key_node.start_mark.line + 1
        mapping[key] = loader.construct_object(value_node)


def _construct_sequence(loader: LineLoader, node: yaml.SequenceNode) -> Iterator[Sequence]:
    sequence = Sequence()
    sequence.line = node.start_mark.line + 1
    sequence.item_lines = [child.start_mark.line + 1 for child in node.value]
    yield sequence
    sequence.extend(loader.construct_object(child) for child in node.value)


LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence)


# --- checking, key by key -----------------------------------------------------------------------


class Check:
    """Collects every problem with its line and key; its readers return None for a bad value.

    `key` is always the whole path of the value (`blocks[3].capacity`); `name` a key of the
    mapping `m` being read."""

    noun = "key"  # what an unknown key is called in the error ("field" in a venue file)

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.errors: list[str] = []

    def error(self, line: int, key: str, message: str) -> None:
        self.errors.append(f"{self.filename}:{line}: {key}: {message}")

    def mapping(
        self, value: Any, line: int, key: str, allowed: tuple[str, ...] | None = None
    ) -> Mapping | None:
        if not isinstance(value, Mapping):
            holding = f" with {', '.join(allowed)};" if allowed else ","
            self.error(line, key or "(file)", f"must be a mapping{holding} got {value!r}")
            return None
        for name in value:
            if allowed is not None and name not in allowed:
                self.error(
                    value.key_lines[name],
                    f"{key}.{name}" if key else str(name),
                    f"unknown {self.noun}; expected one of {', '.join(allowed)}",
                )
        return value

    def get(self, m: Mapping, name: str, key: str) -> tuple[Any, int] | None:
        """(value, line) of `name` in `m`, or None with "missing" (`key` is the path of `m`)."""
        if name not in m:
            self.error(m.line, f"{key}.{name}" if key else name, "missing")
            return None
        return m[name], m.key_lines[name]

    def label(
        self, value: Any, line: int, key: str, *, max_length: int | None = None
    ) -> str | None:
        # Numbers are fine as labels (row 12, turnstile 7); true/false almost always mean the
        # value needs quotes (YAML reads a bare `no` or `on` as a boolean).
        if isinstance(value, bool) or not isinstance(value, str | int):
            self.error(line, key, f"must be text, got {value!r} (put it in quotes)")
            return None
        label = str(value).strip()
        if not label:
            self.error(line, key, "must not be empty")
            return None
        if max_length is not None and len(label) > max_length:
            self.error(line, key, f"must be at most {max_length} characters, got {label!r}")
            return None
        return label

    def text(
        self, m: Mapping, name: str, key: str, *, max_length: int, default: str | None = None
    ) -> str | None:
        """`m[name]` as a label; `default` when it is left out (missing when no default)."""
        if name not in m:
            if default is None:
                self.error(m.line, key, "missing")
            return default
        return self.label(m[name], m.key_lines[name], key, max_length=max_length)

    def names(self, m: Mapping, name: str, key: str, *, max_length: int) -> dict[str, str] | None:
        """`m[name]`: a name in other languages, `{cy: "..."}` (safeground/languages.py); empty
        when left out. An unknown language code is named in the error."""
        if name not in m:
            return {}
        languages = other_languages()
        value, line = m[name], m.key_lines[name]
        if not isinstance(value, Mapping):
            example = ", ".join(f'{code}: "..."' for code in languages)
            self.error(line, key, f"must be a mapping of language to text, like {{{example}}}")
            return None
        names: dict[str, str] = {}
        for code, text in value.items():
            where = f"{key}.{code}"
            if code not in languages:
                self.error(
                    value.key_lines[code],
                    where,
                    f"unknown language {code!r}; expected one of {', '.join(languages)}",
                )
                continue
            label = self.label(text, value.key_lines[code], where, max_length=max_length)
            if label is not None:
                names[code] = label
        return names if len(names) == len(value) else None

    def number_value(
        self,
        value: Any,
        line: int,
        key: str,
        *,
        low: float | None = None,
        high: float | None = None,
        whole: bool = False,
    ) -> float | None:
        kinds = int if whole else int | float
        if isinstance(value, bool) or not isinstance(value, kinds):
            self.error(line, key, f"must be a {'whole ' if whole else ''}number, got {value!r}")
            return None
        if (low is not None and value < low) or (high is not None and value > high):
            if low is not None and high is not None:
                between = f"from {low:g} to {high:g}"
            else:
                between = f"at least {low:g}" if low is not None else f"at most {high:g}"
            self.error(line, key, f"must be {between}, got {_shown(value)}")
            return None
        return value

    def whole_number(
        self, m: Mapping, name: str, key: str, *, minimum: int, default: int | None = None
    ) -> int | None:
        if name not in m:
            if default is None:
                self.error(m.line, key, "missing")
            return default
        value = self.number_value(m[name], m.key_lines[name], key, low=minimum, whole=True)
        return None if value is None else int(value)

    def number(
        self,
        m: Mapping,
        name: str,
        key: str,
        *,
        low: float,
        high: float | None = None,
        default: float | None = None,
    ) -> float | None:
        """A number from low to high (a whole number or a decimal like 0.85)."""
        if name not in m:
            if default is None:
                self.error(m.line, key, "missing")
            return default
        value = self.number_value(m[name], m.key_lines[name], key, low=low, high=high)
        return None if value is None else float(value)

    def boolean(self, m: Mapping, name: str, key: str, *, default: bool | None) -> bool | None:
        if name not in m:
            if default is None:
                self.error(m.line, key, "missing")
            return default
        value = m[name]
        if not isinstance(value, bool):
            self.error(m.key_lines[name], key, f"must be true or false, got {value!r}")
            return None
        return value

    def choice(
        self, value: str | None, line: int, key: str, choices: tuple[str, ...]
    ) -> str | None:
        """`value` (already read as a label) if it is one of `choices`."""
        if value is not None and value not in choices:
            self.error(line, key, f"must be one of {', '.join(choices)}, got '{value}'")
            return None
        return value

    def items(
        self, m: Mapping, name: str, key: str, *, required: bool
    ) -> list[tuple[str, Any, int]]:
        """(key path, value, line) for each item of a list; empty when missing or not a list."""
        if name not in m:
            if required:
                self.error(m.line, key, "missing")
            return []
        value = m[name]
        if not isinstance(value, Sequence):
            self.error(m.key_lines[name], key, f"must be a list, got {value!r}")
            return []
        if len(value) > MAX_ITEMS:
            self.error(m.key_lines[name], key, f"{len(value):,} items; at most {MAX_ITEMS:,}")
            return []
        return [
            (f"{key}[{index}]", item, value.item_lines[index]) for index, item in enumerate(value)
        ]

    def unique(self, seen: dict[str, int], code: str, line: int, key: str, what: str) -> None:
        if code in seen:
            self.error(line, key, f"duplicate {what} '{code}' (first on line {seen[code]})")
        else:
            seen[code] = line
