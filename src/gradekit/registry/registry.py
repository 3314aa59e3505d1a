"""The registry: kind names to factories, from `register` calls and from entry points.

Entry points (group `gradekit.graders`, name = kind, value = `module:factory`) are listed once per
registry, reading metadata only; a kind's module is imported the first time that kind is
created. A plugin that fails to load fails only its own kinds. Two different sources for one
kind are never resolved silently: using that kind raises DuplicateKindError naming both.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, Final

import attrs

from gradekit._errors import ConfigError, DuplicateKindError, PluginLoadError, UnknownKindError
from gradekit._hints import close_matches
from gradekit._types import Grader, error_text
from gradekit.registry.abilities import options_class_of
from gradekit.registry.options import structure_options

__all__ = [
    "ENTRY_POINT_GROUP",
    "KIND_PATTERN",
    "Factory",
    "KindInfo",
    "Registry",
    "creating_registry",
]

ENTRY_POINT_GROUP: Final = "gradekit.graders"
KIND_PATTERN: Final = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$")

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
    """One provider of a kind: an entry point not yet loaded, or a registered factory."""

    kind: str
    distribution: str
    version: str
    value: str
    entry_point: Any = None
    factory: Any = None
    error: PluginLoadError | None = None

    @property
    def label(self) -> str:
        if self.entry_point is None:
            return f"{self.distribution} ({self.value})"
        return f"distribution '{self.distribution}' ({self.value})"

    def load(self) -> Any:
        if self.factory is not None:
            return self.factory
        if self.error is not None:
            raise self.error
        try:
            self.factory = self.entry_point.load()
        except Exception as error:
            self.error = PluginLoadError(
                self.kind, f"'{self.distribution} {self.version}'", self.value, error_text(error)
            )
            raise self.error from error
        return self.factory


def _metadata() -> Any:
    if sys.version_info < (3, 12):
        try:
            import importlib_metadata

            return importlib_metadata
        except ImportError:  # the backport is a dependency, but the stdlib works on 3.10+
            pass
    import importlib.metadata

    return importlib.metadata


class Registry:
    """Maps kind names to factories.

    `entry_points=False` gives an isolated registry that knows only what is registered on it,
    for tests and embedding.
    """

    def __init__(self, *, entry_points: bool = True, group: str = ENTRY_POINT_GROUP) -> None:
        self._use_entry_points: Final = entry_points
        self._group: Final = group
        self._lock = threading.RLock()
        self._sources: dict[str, list[_Source]] | None = None
        self._invalid: list[KindInfo] = []

    # -- discovery -------------------------------------------------------------------------

    def _scan(self) -> dict[str, list[_Source]]:
        with self._lock:
            if self._sources is not None:
                return self._sources
            sources: dict[str, list[_Source]] = {}
            if self._use_entry_points:
                seen: set[tuple[str, str]] = set()
                for entry_point in _metadata().entry_points(group=self._group):
                    dist = entry_point.dist
                    dist_name = dist.metadata["Name"] if dist is not None else "<unknown>"
                    version = dist.version if dist is not None else "?"
                    if not KIND_PATTERN.match(entry_point.name):
                        self._invalid.append(
                            KindInfo(
                                entry_point.name,
                                dist_name,
                                version,
                                entry_point.value,
                                f"invalid kind name '{entry_point.name}': kind names match "
                                f"{KIND_PATTERN.pattern}; rename the entry point",
                            )
                        )
                        continue
                    # The same distribution found twice on the path (or the same value declared
                    # twice) is one source, not a conflict.
                    key = (entry_point.name, entry_point.value)
                    if key in seen:
                        continue
                    seen.add(key)
                    source = _Source(
                        entry_point.name, dist_name, version, entry_point.value, entry_point
                    )
                    sources.setdefault(entry_point.name, []).append(source)
            self._sources = sources
            return sources

    # -- public API ------------------------------------------------------------------------

    def register(self, kind: str, factory: Factory | type, *, source: str | None = None) -> None:
        """Register `factory` for `kind`; registering the same factory again is a no-op.

        A different factory for a kind that is already registered raises DuplicateKindError.
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
            existing = self._scan().setdefault(kind, [])
            for other in existing:
                if other.entry_point is None and other.factory is factory:
                    return
            registered = _Source(kind, source or "<registered>", "", value, factory=factory)
            for other in existing:
                if other.entry_point is None:
                    raise DuplicateKindError(kind, [other.label, registered.label])
            existing.append(registered)

    def unregister(self, kind: str) -> None:
        """Forget factories registered for `kind` with `register` (entry points stay)."""
        with self._lock:
            sources = self._scan().get(kind, [])
            sources[:] = [source for source in sources if source.entry_point is not None]

    def kinds(self) -> list[str]:
        """Every known kind name, sorted. Reads metadata only; imports no plugin."""
        return sorted(kind for kind, sources in self._scan().items() if sources)

    def describe(self) -> list[KindInfo]:
        """Every kind with its source, plus entry points that cannot be used, sorted by kind."""
        infos = [
            KindInfo(
                source.kind,
                source.distribution,
                source.version,
                source.value,
                str(source.error) if source.error else None,
            )
            for sources in self._scan().values()
            for source in sources
        ]
        infos.extend(self._invalid)
        return sorted(infos, key=lambda info: (info.kind, info.distribution))

    def factory(self, kind: str) -> Any:
        """The factory for `kind`, importing its module on first use.

        Raises UnknownKindError, DuplicateKindError or PluginLoadError.
        """
        sources = self._scan().get(kind)
        if not sources:
            raise UnknownKindError(kind, close_matches(kind, self.kinds()))
        with self._lock:
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
        if not isinstance(grader, Grader):
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
