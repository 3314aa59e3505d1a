"""Which tables and columns a query reads, and which of them a suite does not allow.

Names are resolved on sqlglot's scopes (`sqlglot.optimizer.scope`), not read off the text: an
alias (`FROM customers AS c` ... `c.city`) is its table, a CTE or a derived table named like a
table (`WITH orders AS (...)`) is not that table, and a column taken from a CTE or a derived
table is checked where that CTE or derived table reads it, not where it is used. A select
alias used in WHERE, GROUP BY or ORDER BY is not a column. Table-valued functions
(`pragma_table_info('t')`) are not tables.

Without the database's schema, an unqualified column of a query over several tables cannot be
placed in one of them: it is allowed when one of those tables allows it. `*` (and `t.*`) over
a table reads every column, so it is refused whenever columns are restricted; `COUNT(*)` reads
none. Names compare without case, as SQL's unquoted identifiers do.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from sqlglot import exp
    from sqlglot.optimizer.scope import Scope

__all__ = ["Allowed", "NotAllowed", "not_allowed"]


def _names(values: Iterable[str] | None) -> frozenset[str] | None:
    return None if values is None else frozenset(value.casefold() for value in values)


@attrs.frozen
class Allowed:
    """The tables and the columns a query may read; None where a suite sets no limit.

    A column is a name (`city`: in any table) or `table.column` (in that table only).
    """

    tables: frozenset[str] | None = attrs.field(converter=_names)
    columns: frozenset[str] | None = attrs.field(converter=_names)

    def table(self, name: str) -> bool:
        """True when the table `name` may be read."""
        return self.tables is None or name.casefold() in self.tables

    def column(self, name: str, tables: Iterable[str]) -> bool:
        """True when the column `name` may be read from (one of) `tables`."""
        if self.columns is None:
            return True
        name = name.casefold()
        return name in self.columns or any(
            f"{table.casefold()}.{name}" in self.columns for table in tables
        )


@attrs.frozen
class NotAllowed:
    """The tables and columns a statement reads that are not allowed, in the order met."""

    tables: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.tables or self.columns)

    def to_dict(self) -> dict[str, list[str]]:
        """The JSON form listed in details."""
        return {"tables": list(self.tables), "columns": list(self.columns)}


def not_allowed(node: exp.Expression, allowed: Allowed) -> NotAllowed:
    """What `node` (a query) reads that `allowed` does not allow.

    Raises sqlglot's OptimizeError when its names cannot be resolved.
    """
    from sqlglot.optimizer.scope import traverse_scope

    tables: dict[str, None] = {}
    columns: dict[str, None] = {}
    for scope in traverse_scope(node):
        for table in _base_tables(scope.sources.values()):
            if not allowed.table(table):
                tables.setdefault(table)
        if allowed.columns is not None:
            for column in _refused_columns(scope, allowed):
                columns.setdefault(column)
    return NotAllowed(tuple(tables), tuple(columns))


def _base_tables(sources: Iterable[Any]) -> Iterator[str]:
    """Names of the real tables among a scope's sources (not CTEs, derived tables, functions)."""
    from sqlglot import exp

    for source in sources:
        if isinstance(source, exp.Table) and source.name:
            yield source.name


def _source(scope: Scope | None, name: str) -> Any:
    """What the qualifier `name` stands for in `scope` or an enclosing one: a Table, a Scope
    (CTE, derived table), or None when nothing there has that name."""
    while scope is not None:
        if name in scope.sources:
            return scope.sources[name]
        scope = scope.parent
    return None


def _derived_outputs(scope: Scope) -> set[str]:
    """Column names the CTEs and derived tables of the scope's FROM clause provide: those
    they select, and those their alias names (`WITH n(i) AS ...`, `AS v(x, y)`)."""
    from sqlglot import exp
    from sqlglot.optimizer.scope import Scope

    outputs: set[str] = set()
    for _, source in scope.selected_sources.values():
        if not isinstance(source, Scope):
            continue
        if isinstance(source.expression, exp.Query):
            outputs.update(name.casefold() for name in source.expression.named_selects)
        # The alias sits on the node itself (VALUES), on its subquery or CTE, or, for the
        # branch of a recursive CTE, on the CTE around the UNION.
        holder: Any = source.expression
        while holder is not None:
            alias = holder.args.get("alias")
            if isinstance(alias, exp.TableAlias):
                outputs.update(column.name.casefold() for column in alias.columns)
                break
            parent = holder.parent
            if not isinstance(
                parent, (exp.Union, exp.Intersect, exp.Except, exp.CTE, exp.Subquery)
            ):
                break
            holder = parent
    return outputs


def _near_tables(scope: Scope) -> list[str]:
    """The real tables an unqualified column of `scope` may come from: those of its FROM
    clause and, for a correlated column, those of the enclosing scopes."""
    found: list[str] = []
    current: Scope | None = scope
    while current is not None:
        sources = (source for _, source in current.selected_sources.values())
        found.extend(table for table in _base_tables(sources) if table not in found)
        current = current.parent
    return found


def _refused_columns(scope: Scope, allowed: Allowed) -> Iterator[str]:
    from sqlglot import exp

    if not isinstance(scope.expression, exp.Select):
        return  # a UNION's ORDER BY names its output columns
    select = scope.expression
    projected = {id(node) for e in select.expressions for node in e.walk()}
    aliases = {e.alias.casefold() for e in select.expressions if e.alias}
    outputs = _derived_outputs(scope)
    # sqlglot lists a subquery's unqualified columns in the enclosing scope too (they might
    # be correlated); each column is checked once, in the scope of its own SELECT.
    own = [column for column in scope.columns if column.find_ancestor(exp.Select) is select]
    for column in [*own, *_using(select)]:
        name = column.name
        if column.table:
            source = _source(scope, column.table)
            if source is None or isinstance(source, exp.Table):
                table = source.name if source is not None and source.name else column.table
                if not allowed.column(name, [table]):
                    yield f"{table}.{name}"
            continue
        folded = name.casefold()
        if folded in outputs or (folded in aliases and id(column) not in projected):
            continue  # a CTE's or derived table's column, or a select alias
        tables = _near_tables(scope)
        if not allowed.column(name, tables):
            nearest = list(_base_tables(src for _, src in scope.selected_sources.values()))
            named = nearest if nearest else tables
            yield f"{named[0]}.{name}" if len(named) == 1 else name
    yield from _refused_stars(scope, select)


def _using(select: exp.Select) -> list[exp.Column]:
    """The columns of the select's `JOIN ... USING (a, b)`, as unqualified columns."""
    from sqlglot import exp

    return [
        exp.column(identifier.name)
        for join in select.args.get("joins") or ()
        for identifier in join.args.get("using") or ()
    ]


def _refused_stars(scope: Scope, select: exp.Select) -> Iterator[str]:
    """`*` and `t.*` in the select list, over real tables: they read every column."""
    from sqlglot import exp

    for projection in select.expressions:
        if isinstance(projection, exp.Star):
            for table in _base_tables(src for _, src in scope.selected_sources.values()):
                yield f"{table}.*"
        elif isinstance(projection, exp.Column) and projection.is_star:
            source = _source(scope, projection.table)
            if isinstance(source, exp.Table) and source.name:
                yield f"{source.name}.*"
