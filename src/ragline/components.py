"""One registry of pipeline components, by role and name.

A component class or factory registers itself where it is defined::

    @register("retriever", "bm25")
    class BM25Retriever(Retriever): ...

and everything else derives from the registry: specs (``bm25:k1=1.2``) and pipeline configs build
components with :func:`build`, the CLI lists the choices and their one-line summaries, experiments
sweep them. Adding a retriever is one new file in ``ragline/retrieve/`` (see docs/architecture.md,
"Adding a component"): the packages of :data:`ROLES` are scanned for registrations the first time a
role is asked for, so nothing else needs to list the new name.

The roles are small typed Protocols (``ragline.roles``); :func:`build` passes the dependencies a
role needs (an ``index`` for retrievers, say) as keyword arguments, then the spec's parameters, and
checks what it built against the role's Protocol (a ``ConfigError`` names the members it lacks).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import re
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragline.errors import ConfigError
from ragline.roles import PROTOCOLS, missing_members
from ragline.specs import format_spec, parse_spec

# role -> (what it does, the modules or packages whose modules register components of that role)
ROLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "retriever": (
        "ranks document ids for a query, the filter applied inside",
        ("ragline.retrieve", "ragline.structures"),
    ),
    "fuser": ("combines several ranked lists into one", ("ragline.retrieve",)),
    "query_transform": ("turns a query into weighted queries", ("ragline.retrieve",)),
    "reranker": ("reorders a first stage's hits", ("ragline.retrieve",)),
    "expander": ("maps small chunks to the larger text around them", ("ragline.retrieve",)),
    "reader": (
        "answers a question from a context, with citations",
        (
            "ragline.answer.pipeline",
            "ragline.answer.cascade",
            "ragline.answer.aggregate",
            "ragline.answer.global_search",
            "ragline.agent",
            "ragline.reflect",
        ),
    ),
    "chunker": (
        "cuts a document into chunks",
        ("ragline.ingest.chunkers", "ragline.ingest.sentence_pack", "ragline.ingest.llm_chunker"),
    ),
    "contextualizer": (
        "adds context to chunks before indexing",
        ("ragline.ingest.context", "ragline.ingest.llm_context"),
    ),
    "grader": (
        "scores how well hits answer a (sub-)question",
        ("ragline.retrieve", "ragline.agent", "ragline.reflect"),
    ),
    "guard": ("flags or drops instruction-like text in retrieved hits before the reader", ("ragline.guard",)),
    "compressor": (
        "keeps the sentences of each hit that best answer the question, within a token budget",
        ("ragline.answer.compress",),
    ),
    "store": (
        "holds a collection and searches it, opened by URI scheme (milvus://, file:// or a path)",
        ("ragline.store",),
    ),
    "probe": (
        "measures one failure mode of a pipeline, unfixed against fixed arm (ragline doctor)",
        ("ragline.doctor",),
    ),
    "experiment": (
        "reruns a lecture experiment on a built-in world or a dataset (ragline experiment)",
        ("ragline.eval.experiments", "ragline.cli.world_experiments"),
    ),
}


@dataclass(frozen=True)
class Component:
    """A registered factory: ``factory(**dependencies, **params)`` builds the component."""

    role: str
    name: str
    factory: Callable[..., Any]

    @property
    def summary(self) -> str:
        """The first line of the factory's docstring (shown by ``--help`` and ``ragline components``)."""
        doc = inspect.getdoc(self.factory) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

    @property
    def description(self) -> str:
        """The first paragraph of the factory's docstring on one line (``ragline experiment --help`` lists it)."""
        doc = inspect.getdoc(self.factory) or ""
        return " ".join(doc.strip().split("\n\n")[0].split())


_REGISTRY: dict[str, dict[str, Component]] = {role: {} for role in ROLES}
_ALIASES: dict[str, dict[str, str]] = {role: {} for role in ROLES}  # role -> old name -> the name it now has
_DISCOVERED: set[str] = set()


def register(role: str, name: str, aliases: tuple[str, ...] = ()) -> Callable[[Any], Any]:
    """Class or function decorator: make ``factory`` the component ``name`` of ``role``.

    ``aliases`` are other names that build the same component (a renamed one's old names: configs that
    use them keep working); they are not listed by :func:`names`.
    """
    if role not in ROLES:
        raise ConfigError(f"unknown component role {role!r}; roles are {', '.join(ROLES)}")

    def decorate(factory: Any) -> Any:
        for key in (name, *aliases):
            existing = _REGISTRY[role].get(_ALIASES[role].get(key, key))
            if existing is not None and existing.factory is not factory:
                where = getattr(existing.factory, "__module__", "?")
                raise ConfigError(f"{role} {key!r} is registered twice (first in {where})")
        _REGISTRY[role][name] = Component(role, name, factory)
        _ALIASES[role].update((alias, name) for alias in aliases)
        return factory

    return decorate


def _discover(role: str) -> None:
    """Import the modules that register ``role``'s components (once per process)."""
    if role in _DISCOVERED:
        return
    for target in ROLES[role][1]:
        module = importlib.import_module(target)
        if hasattr(module, "__path__"):  # a package: every module in it
            for info in pkgutil.iter_modules(module.__path__):
                if not info.name.startswith("_"):
                    importlib.import_module(f"{target}.{info.name}")
    _DISCOVERED.add(role)


# A registration as it is written at a definition; used only to find which module to import first.
_REGISTRATION = re.compile(r"""@register\(\s*["'](\w+)["']\s*,\s*["']([^"']+)["']\s*[,)]""")


def _modules_of(target: str) -> list[tuple[str, Path]]:
    """``target``'s module files without importing them: the module itself, or every module of a package."""
    spec = importlib.util.find_spec(target)
    if spec is None:
        return []
    if spec.submodule_search_locations is None:
        return [(target, Path(spec.origin))] if spec.origin else []
    return [
        (f"{target}.{info.name}", Path(info.module_finder.path) / f"{info.name}.py")  # type: ignore[union-attr]
        for info in pkgutil.iter_modules(spec.submodule_search_locations)
        if not info.name.startswith("_") and not info.ispkg
    ]


def _import_registrar(role: str, name: str) -> None:
    """Import only the module whose source registers ``role`` ``name``, when one does.

    Importing every retriever module to build one BM25 retriever cost a one-query command a tenth of a
    second; the full scan (:func:`_discover`) still runs whenever a role's list is asked for or the name is
    not found this way (source not shipped, say), and it alone detects a name registered twice.
    """
    for module, path in (m for target in ROLES[role][1] for m in _modules_of(target)):
        try:
            source = path.read_text(encoding="utf-8")
        except OSError:
            continue
        if (role, name) in _REGISTRATION.findall(source):
            importlib.import_module(module)
            return


def components(role: str) -> dict[str, Component]:
    """The components of ``role`` by name, in registration order."""
    if role not in ROLES:
        raise ConfigError(f"unknown component role {role!r}; roles are {', '.join(ROLES)}")
    _discover(role)
    return dict(_REGISTRY[role])


def names(role: str) -> tuple[str, ...]:
    """The registered names of ``role``, sorted."""
    return tuple(sorted(components(role)))


def component(role: str, name: str) -> Component:
    """The component ``name`` (or an alias of it) of ``role``; a ``ConfigError`` listing the choices when there
    is none."""
    if role in ROLES and name not in _REGISTRY[role] and name not in _ALIASES[role] and role not in _DISCOVERED:
        _import_registrar(role, name)
    found = _REGISTRY[role].get(_ALIASES[role].get(name, name)) if role in ROLES else None
    if found is None:
        components(role)
        found = _REGISTRY[role].get(_ALIASES[role].get(name, name))
    if found is None:
        choices = ", ".join(names(role)) or "none registered"
        raise ConfigError(f"unknown {role} {name!r}; choose one of: {choices}")
    return found


def spec_of(value: str | Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(name, params)`` from a spec string or a mapping ``{"name": ..., **params}`` (a config table)."""
    if isinstance(value, str):
        return parse_spec(value, "component spec")
    if isinstance(value, Mapping):
        params = dict(value)
        name = params.pop("name", None)
        if not isinstance(name, str) or not name:
            raise ConfigError(f"component table {dict(value)!r} has no 'name'")
        return name, params
    raise ConfigError(f"a component is a spec string or a table with a 'name', not {type(value).__name__}")


def build(role: str, spec: str | Mapping[str, Any], **dependencies: Any) -> Any:
    """The ``role`` component that ``spec`` names, built with the spec's parameters.

    ``dependencies`` (an ``index``, BM25 defaults, a model) are offered: each is passed only when the
    factory has a parameter of that name. An unknown name or parameter is a ``ConfigError`` that names
    it and lists what is accepted.
    """
    name, params, entry, named = _checked(role, spec, dependencies)
    offered = {key: value for key, value in dependencies.items() if key in named}
    try:
        built = entry.factory(**offered, **params)
    except TypeError as error:  # a value of the wrong kind: name the component and its spec
        raise ConfigError(f"{role} {format_spec(name, params)!r}: {error}") from None
    lacking = missing_members(built, role)
    if lacking:  # caught here, not at the first query deep inside a pipeline
        where = getattr(entry.factory, "__module__", "?")
        raise ConfigError(
            f"{role} {name!r} ({where}) built a {type(built).__name__} without {', '.join(lacking)}: "
            f"a {role} must have what ragline.roles.{PROTOCOLS[role].__name__} lists"
        )
    return built


def check(
    role: str, spec: str | Mapping[str, Any], dependencies: Sequence[str] = ()
) -> tuple[str, dict[str, Any], set[str]]:
    """``(name, params, the keyword parameters its factory names)`` of ``spec`` once its name and parameters are
    known to ``role``, without building it (a component built later, lazily, fails at its configuration, not at
    its first use); ``dependencies``: the names the builder will offer, left out of the accepted parameters a
    ``ConfigError`` lists. A factory that takes ``**params`` checks those only when it builds."""
    name, params, _, named = _checked(role, spec, dependencies)
    return name, params, named


def _checked(
    role: str, spec: str | Mapping[str, Any], dependencies: Iterable[str]
) -> tuple[str, dict[str, Any], Component, set[str]]:
    """The spec's name and params, its component and the parameter names its factory takes (checked)."""
    name, params = spec_of(spec)
    entry = component(role, name)
    named, open_ended = _parameters(entry.factory)
    unknown = sorted(set(params) - named) if not open_ended else []
    if unknown:
        choices = ", ".join(sorted(named - set(dependencies))) or "none"
        raise ConfigError(f"{role} {name!r}: unknown parameter(s) {', '.join(unknown)}; it takes: {choices}")
    return name, params, entry, named


def retrieves_itself(factory: object) -> bool:
    """Whether a reader factory builds a reader that retrieves by itself (its class says ``retrieves = True``;
    a factory function names that class as its return type)."""
    built_type = factory if isinstance(factory, type) else typing.get_type_hints(factory).get("return")
    return bool(getattr(built_type, "retrieves", False))


def _parameters(factory: Callable[..., Any]) -> tuple[set[str], bool]:
    """The keyword parameters ``factory`` names, and whether it also takes ``**kwargs``."""
    target = factory.__init__ if inspect.isclass(factory) else factory  # type: ignore[misc]
    signature = inspect.signature(target)
    kinds = {p.kind for p in signature.parameters.values()}
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    named = {n for n, p in signature.parameters.items() if n != "self" and p.kind in keyword}
    return named, inspect.Parameter.VAR_KEYWORD in kinds
