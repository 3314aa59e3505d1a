"""The registry: kind names to factories, from `register` calls and from entry points.

Names without a dot are gradekit's own kinds: they resolve from gradekit's table of its entry
points (`gradekit.registry.plugins.BUILTIN_KINDS`) without reading any installed metadata, and
another distribution's entry point with such a name is refused (its module is never imported).
Other entry points (group `gradekit.graders`, name = kind, value = `module:factory`) are
scanned once per registry, reading metadata only, when a dotted kind or the full list is first
needed; a kind's module is imported the first time that kind is created. A plugin that fails to
load fails only its own kinds. Two different sources for one kind are never resolved silently:
using that kind raises DuplicateKindError naming both. Code may `register` any valid name,
dotted or not: it is the user's own process.

Also the rows of `gradekit kinds` (`kind_rows`): every kind a registry knows, with where it
comes from and whether it can be used.

**The optional abilities of graders and factories**, detected in one place. Each ability is a small
protocol declared beside `Grader` in `gradekit.core.types`: `AsyncGrader` (`async def agrade`),
`InlineGrader` (`inline = True`), `BlockingGrader` (`grade_blocking`), `well_formed` results,
`bounded` grades, and `DeclaresOptions` (a factory's `options_class`, and `options_complete` when
that class declares every option). The runner, the composite kinds, the registry and the schema ask
these functions, never the attributes themselves, so each rule reads the same everywhere. What the
runner decides from them (which entries are inline, which blocking) is the runner's:
`gradekit.run.dispatch`.

An entry is what `gradekit.registry.entries.GraderEntry` provides, read through the `Entry`
protocol."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any, Final, Protocol, TypeGuard

import attrs

from gradekit.core.errors import (
    ConfigError,
    DuplicateKindError,
    GradekitError,
    PluginLoadError,
    UnknownKindError,
    close_matches,
)
from gradekit.core.types import Grader, Sample, error_text, is_bounded, is_well_formed
from gradekit.registry.options import structure_options
from gradekit.registry.plugins import BUILTIN_DISTRIBUTION, BUILTIN_KINDS, KIND_PATTERN, scan

__all__ = [
    "ENTRY_POINT_GROUP",
    "KIND_PATTERN",
    "Entry",
    "Factory",
    "KindInfo",
    "Registry",
    "agrade_of",
    "blocking_grade_of",
    "creating_registry",
    "declares_every_option",
    "declares_inline",
    "has_well_formed_results",
    "is_async",
    "is_bounded_entry",
    "is_grader",
    "kind_rows",
    "options_class_of",
]


_GRADER_TYPES: dict[type, bool] = {}


def is_grader(value: object) -> TypeGuard[Grader]:
    """True when `value` is a grader: it has `kind`, `name` and `grade` (the `Grader`
    protocol). Asked once per type: a protocol's `isinstance` costs tens of microseconds
    before Python 3.12, more than a whole grade of a text kind."""
    known = _GRADER_TYPES.get(type(value))
    if known is None:
        known = _GRADER_TYPES[type(value)] = isinstance(value, Grader)
    return known


def agrade_of(grader: Grader) -> Callable[[Sample], Awaitable[Any]] | None:
    """The grader's `agrade`, or None when it has none (it is then graded with `grade`)."""
    agrade: Callable[[Sample], Awaitable[Any]] | None = getattr(grader, "agrade", None)
    return agrade


def blocking_grade_of(grader: Grader) -> Callable[[Sample, Any], Any] | None:
    """The grader's `grade_blocking(sample, cancel)` (`BlockingGrader`), or None."""
    blocking = getattr(grader, "grade_blocking", None)
    return blocking if callable(blocking) else None


def is_async(grader: Grader) -> bool:
    """True for a grader that can be awaited (`AsyncGrader`): the runner prefers `agrade`."""
    return agrade_of(grader) is not None


def declares_inline(grader: Grader) -> bool:
    """True for a grader whose class says it is pure, CPU-only and always fast
    (`InlineGrader`: `inline = True`, exactly True)."""
    return getattr(grader, "inline", False) is True


def sandboxes_itself(grader: Grader) -> bool:
    """True for a grader whose grades run their commands in a process and sandbox of their
    own (`program`, `build`, `lint`: `sandboxes_itself = True`, exactly True). The runner
    grades it in its own process whatever `isolation` says: a process-isolated worker keeps
    gradekit's environment and shows the suite's files, and a command run inside it (where
    bubblewrap cannot nest) would see both."""
    return getattr(grader, "sandboxes_itself", False) is True


class Entry(Protocol):
    """What these rules read of a grader entry (`GraderEntry`)."""

    @property
    def grader(self) -> Grader:
        """The entry's grader."""
        ...

    @property
    def kind(self) -> str:
        """The kind the entry names."""
        ...

    @property
    def name(self) -> str:
        """The entry's name, which its results carry."""
        ...

    @property
    def timeout(self) -> float | None:
        """The entry's own timeout, if it sets one."""
        ...

    @property
    def isolation(self) -> str | None:
        """The entry's own isolation, if it sets one."""
        ...


def is_bounded_entry(entry: Entry) -> bool:
    """True when the entry's grade always ends in time bounded by its sample: its grader's
    `grade` is marked `bounded` (see `gradekit.core.types.bounded`)."""
    return is_bounded(entry.grader.grade)


def has_well_formed_results(entry: Entry) -> bool:
    """True when the entry's results need no check but its threshold: its grader's `grade`
    is marked `well_formed` and the entry keeps the grader's kind and name."""
    grader = entry.grader
    return is_well_formed(grader.grade) and entry.kind == grader.kind and entry.name == grader.name


def options_class_of(factory: Any) -> type | None:
    """The attrs class whose fields are a kind's options: the factory itself when it is one,
    else the `options_class` it declares (`DeclaresOptions`), else None."""
    if isinstance(factory, type) and attrs.has(factory):
        return factory
    options = getattr(factory, "options_class", None)
    return options if isinstance(options, type) and attrs.has(options) else None


def declares_every_option(factory: Any) -> bool:
    """True when the kind takes no option its options class does not declare: the factory is
    that attrs class, or it declares `options_complete = True` beside its `options_class`."""
    if isinstance(factory, type) and attrs.has(factory):
        return True
    return (
        options_class_of(factory) is not None
        and getattr(factory, "options_complete", False) is True
    )


ENTRY_POINT_GROUP: Final = "gradekit.graders"

Factory = Callable[[str, Mapping[str, Any]], Grader]
"""`factory(name, config) -> Grader`; an attrs class with a `name` field also qualifies."""


@attrs.frozen
class KindInfo:
    """Where a kind comes from: its distribution (or `<registered>`), version and target."""

    kind: str
    distribution: str
    version: str
    value: str
    error: str | None = None


@attrs.define
class _Source:
    """One provider of a kind: a built-in or an entry point not yet loaded, or a registered
    factory. `error` is set once it failed to load, or up front when it is refused."""

    kind: str
    distribution: str
    version: str
    value: str
    entry_point: Any = None
    factory: Any = None
    error: PluginLoadError | None = None
    registered: bool = False
    refused: bool = False

    @property
    def builtin(self) -> bool:
        return self.entry_point is None and not self.registered

    @property
    def label(self) -> str:
        if self.registered:
            return f"{self.distribution} ({self.value})"
        return f"distribution '{self.distribution}' ({self.value})"

    def failure(self, cause: str) -> PluginLoadError:
        """The error of this source for `cause`, naming its distribution and entry point."""
        named = f"{self.distribution} {self.version}" if self.version else self.distribution
        return PluginLoadError(self.kind, f"'{named}'", self.value, cause)

    def load(self) -> Any:
        if self.factory is not None:
            return self.factory
        if self.error is not None:
            raise self.error
        try:
            self.factory = self._import()
        except Exception as error:
            self.error = self.failure(error_text(error))
            raise self.error from error
        return self.factory

    def _import(self) -> Any:
        if self.entry_point is not None:
            return self.entry_point.load()
        module, _, attribute = self.value.partition(":")  # a built-in: `module:factory`
        target: Any = importlib.import_module(module)
        for part in attribute.split("."):
            target = getattr(target, part)
        return target


class Registry:
    """Maps kind names to factories.

    `entry_points=False` gives an isolated registry that knows only what is registered on it,
    for tests and embedding.
    """

    def __init__(self, *, entry_points: bool = True, group: str = ENTRY_POINT_GROUP) -> None:
        self._use_entry_points: Final = entry_points
        self._group: Final = group
        self._lock = threading.RLock()
        own = entry_points and group == ENTRY_POINT_GROUP
        self._builtins: Final = {
            kind: _Source(kind, BUILTIN_DISTRIBUTION, "", value)
            for kind, value in (BUILTIN_KINDS.items() if own else ())
        }
        self._registered: dict[str, list[_Source]] = {}
        self._plugins: dict[str, list[_Source]] | None = None

    # -- discovery -------------------------------------------------------------------------

    def _scan(self) -> dict[str, list[_Source]]:
        """Every other distribution's entry points by kind, refused ones with their error."""
        with self._lock:
            if self._plugins is not None:
                return self._plugins
            plugins: dict[str, list[_Source]] = {}
            if self._use_entry_points:
                found = scan(self._group, own=BUILTIN_DISTRIBUTION if self._builtins else None)
                for builtin in self._builtins.values():
                    builtin.version = found.own_version or "?"
                for entry in found.entries:
                    source = _Source(entry.kind, entry.distribution, entry.version, entry.value)
                    source.entry_point = entry.entry_point
                    if entry.refused is not None:
                        source.refused = True
                        source.error = source.failure(entry.refused)
                    plugins.setdefault(entry.kind, []).append(source)
            self._plugins = plugins
            return plugins

    def _sources(self, kind: str) -> list[_Source]:
        """The sources of `kind`. An undotted kind is gradekit's or registered: no scan, unless
        nothing provides it (then a refused entry point, if any, explains why)."""
        builtin = self._builtins.get(kind)
        sources = [builtin] if builtin is not None else []
        sources.extend(self._registered.get(kind, ()))
        if "." in kind or not sources:
            sources.extend(self._scan().get(kind, ()))
        return sources

    def _all_sources(self) -> list[_Source]:
        plugins = self._scan()
        every = [*self._builtins.values()]
        every.extend(source for sources in self._registered.values() for source in sources)
        every.extend(source for sources in plugins.values() for source in sources)
        return every

    # -- public API ------------------------------------------------------------------------

    def register(self, kind: str, factory: Factory | type, *, source: str | None = None) -> None:
        """Register `factory` for `kind`; registering the same factory again is a no-op.

        A different factory for a kind that is already registered raises DuplicateKindError;
        one for a kind an entry point provides raises it when the kind is used.
        """
        if not isinstance(kind, str) or not KIND_PATTERN.match(kind):
            raise ConfigError(
                f"invalid kind name {kind!r}: kind names match {KIND_PATTERN.pattern} "
                "(lowercase, dots between namespace parts, e.g. 'acme.rouge')"
            )
        if not callable(factory):
            raise ConfigError(f"factory for kind '{kind}' must be callable, got {factory!r}")
        value = f"{getattr(factory, '__module__', '?')}:{getattr(factory, '__qualname__', factory)}"
        with self._lock:
            existing = self._registered.setdefault(kind, [])
            for other in existing:
                if other.factory is factory:
                    return
            registered = _Source(
                kind, source or "<registered>", "", value, factory=factory, registered=True
            )
            if existing:
                raise DuplicateKindError(kind, [existing[0].label, registered.label])
            existing.append(registered)

    def unregister(self, kind: str) -> None:
        """Forget factories registered for `kind` with `register` (entry points stay)."""
        with self._lock:
            self._registered.pop(kind, None)

    def kinds(self) -> list[str]:
        """Every known kind name, sorted. Reads metadata only; imports no plugin."""
        return sorted({source.kind for source in self._all_sources() if not source.refused})

    def describe(self, *, load: bool = False) -> list[KindInfo]:
        """Every kind with its source, plus entry points that cannot be used, sorted by kind.

        Without `load`, from installed metadata only (no plugin's code runs): the entry points
        refused by name, those that failed to load earlier in this process, and two sources
        of one kind with different entry points (a conflict `create` would raise). With
        `load`, every kind that is not only gradekit's own is loaded first (importing every
        plugin), so each source that fails carries its own error, and a conflict is exact
        (two entry points resolving to one object are none). Either way a conflict is on the
        row of each plugin or registered factory in it, never on gradekit's. gradekit's own
        kinds are not imported: their modules need nothing beyond gradekit, and
        tests/registry/test_builtin_table.py loads each of them.
        """
        conflicts: dict[str, str] = {}
        if not load:
            conflicts = self._declared_conflicts()
        else:
            for kind in self.kinds():
                if kind in self._builtins and not self._registered.get(kind):
                    continue
                try:
                    self.factory(kind)
                except DuplicateKindError as conflict:
                    conflicts[kind] = str(conflict)
                except GradekitError:
                    pass  # a load failure: the failing source holds its own error
        infos = []
        for source in self._all_sources():
            problem = str(source.error) if source.error is not None else None
            if problem is None and source.kind in conflicts and not source.builtin:
                problem = conflicts[source.kind]
            infos.append(
                KindInfo(source.kind, source.distribution, source.version, source.value, problem)
            )
        return sorted(infos, key=lambda info: (info.kind, info.distribution))

    def _declared_conflicts(self) -> dict[str, str]:
        """kind -> the DuplicateKindError message, for each kind whose usable sources name
        different entry points (read from metadata: nothing is imported)."""
        by_kind: dict[str, list[_Source]] = {}
        for source in self._all_sources():
            if source.error is None:
                by_kind.setdefault(source.kind, []).append(source)
        return {
            kind: str(DuplicateKindError(kind, [source.label for source in sources]))
            for kind, sources in by_kind.items()
            if len({source.value for source in sources}) > 1
        }

    def provider(self, kind: str) -> KindInfo | None:
        """Where `kind` comes from as `create` resolves it (its first source); None when
        nothing provides it. Reads metadata only for a dotted kind. A factory registered in
        code has version `""` (and `<registered>`, or the `source` given, as distribution)."""
        with self._lock:
            sources = self._sources(kind)
        if not sources:
            return None
        source = sources[0]
        return KindInfo(source.kind, source.distribution, source.version, source.value)

    def factory(self, kind: str) -> Any:
        """The factory for `kind`, importing its module on first use.

        Raises UnknownKindError, DuplicateKindError or PluginLoadError; ConfigError when
        `kind` is not a string.
        """
        if not isinstance(kind, str):
            raise ConfigError(
                f"kind must be a string naming a grader kind (such as 'equality'), got {kind!r}"
            )
        with self._lock:
            sources = self._sources(kind)
            if not sources:
                raise UnknownKindError(kind, close_matches(kind, self.kinds()))
            if len(sources) == 1:
                return sources[0].load()
            # Several sources: fine only if they all resolve to the very same object.
            factories = [source.load() for source in sources]
            if all(factory is factories[0] for factory in factories):
                return factories[0]
            raise DuplicateKindError(kind, [source.label for source in sources])

    def create(
        self, kind: str, name: str | None = None, config: Mapping[str, Any] | None = None
    ) -> Grader:
        """Create a grader of `kind` named `name` (default: the kind) from `config`.

        An attrs-class factory gets `config` structured into it (unknown keys forbidden); any
        other factory is called as `factory(name, config)`. Bad options raise ConfigError.
        """
        factory = self.factory(kind)
        name = kind if name is None else name
        config = {} if config is None else config
        # Composite kinds create their children with the registry that created them.
        token = _CREATING.set(self)
        try:
            if isinstance(factory, type) and attrs.has(factory):
                if "name" not in attrs.fields_dict(factory):
                    raise ConfigError(
                        f"grader class {factory.__qualname__} for kind '{kind}' has no 'name' "
                        "field; add `name: str = attrs.field(kw_only=True, default='')`"
                    )
                grader = structure_options(factory, config, kind=kind, extra={"name": name})
            else:
                grader = factory(name, config)
        finally:
            _CREATING.reset(token)
        if not is_grader(grader):
            raise ConfigError(
                f"the factory for kind '{kind}' returned {type(grader).__name__}, which is not "
                "a grader: it needs `kind`, `name` and `grade(sample)`"
            )
        return grader

    def options_class(self, kind: str) -> type | None:
        """The attrs class whose fields are `kind`'s options, when its factory is one."""
        return options_class_of(self.factory(kind))


default_registry: Final = Registry()

_CREATING: ContextVar[Registry | None] = ContextVar("gradekit_creating_registry", default=None)


def creating_registry() -> Registry:
    """The registry whose `create` is running (for factories that create graders of their
    own, like the composite kinds), or the default registry outside a `create`."""
    return _CREATING.get() or default_registry


def register(kind: str, factory: Factory | type) -> None:
    """Register `factory` for `kind` in the default registry."""
    default_registry.register(kind, factory)


def create(kind: str, name: str | None = None, config: Mapping[str, Any] | None = None) -> Grader:
    """Create a grader of `kind` from the default registry."""
    return default_registry.create(kind, name, config)


def kinds() -> list[str]:
    """Every kind the default registry knows, sorted."""
    return default_registry.kinds()


def kind_rows(registry: Registry, *, load: bool = False) -> list[dict[str, Any]]:
    """One row per kind and source (sorted): `kind`, `distribution`, `version`, `entry_point`,
    and `error` (None for a kind not known to be unusable, else why it cannot be used, on the
    row of the source at fault).

    Read from installed metadata only, so listing runs no plugin's code (a name refused, two
    distributions declaring one kind are found there); `load` imports every plugin's kind
    to find the ones that fail to load too. gradekit's own need nothing to load."""
    return [
        {
            "kind": info.kind,
            "distribution": info.distribution,
            "version": info.version,
            "entry_point": info.value,
            "error": info.error,
        }
        for info in registry.describe(load=load)
    ]
