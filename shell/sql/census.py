"""One walk over a query's tree that tells which kinds of node it holds, and where its tables are.

Why it exists: the planner asks many questions of a query (does it read a view, has it a window table
function, an OVER window, an aggregate, an IN or EXISTS subquery, which tables does it read), and each
question was a walk over the whole tree (`find_all`, `find`): some fifteen walks per query, with the
copies about 20 us per node in all, so a 1 MB query took many seconds for nothing. A census is one walk
(`copied` takes it while copying the tree); a question about a kind the tree does not hold is then
answered without walking, and the tables, CTEs and IN lists are listed as the walks found them (breadth
first, `find_all`'s order). The questions are still asked by walking when the tree
holds the kind: the census only skips work that could find nothing.

A census describes the tree as it was when it was taken. Whoever changes the tree after that either
keeps it true (`note` the kinds it adds; the tables listed are the same nodes, so renaming them in place
keeps them listed) or drops it.
"""

from __future__ import annotations

from collections import deque
from copy import deepcopy
from typing import TypeVar

from sqlglot import exp

from shell.sql.meta import NodeMeta

E = TypeVar("E", bound=exp.Expr)

# The nodes a census lists, by the class they are found as (an instance of a subclass is listed under it).
_LISTED = (exp.Table, exp.CTE, exp.In)
_UNSEEN = object()
_listed_as: dict[type, type | None] = {}  # a class met -> the listed class it is found as, or None


def _listed_class(cls: type) -> type | None:
    found = _listed_as[cls] = next((base for base in _LISTED if issubclass(cls, base)), None)
    return found


class Census:
    """The kinds of node in `tree` (with their base classes, so `has(exp.AggFunc)` is any aggregate) and its
    Table, CTE and IN nodes, each list in `tree.find_all`'s order."""

    __slots__ = ("_kinds", "_listed")

    def __init__(self, tree: exp.Expr | None) -> None:
        self._kinds: set[type] = set()
        self._listed: dict[type, list[exp.Expr]] = {base: [] for base in _LISTED}
        if tree is None:
            return
        see, listed = self._kinds.add, self._listed
        expr = exp.Expr
        queue = deque((tree,))
        pop, push = queue.popleft, queue.append
        while queue:  # breadth first, children in order: the order of sqlglot's walk and find_all
            node = pop()
            cls = node.__class__
            see(cls)
            base = _listed_as.get(cls, _UNSEEN)
            if base is _UNSEEN:
                base = _listed_class(cls)
            if base is not None:
                listed[base].append(node)  # type: ignore[index]
            for value in node.args.values():
                if type(value) is list:
                    for child in value:
                        if isinstance(child, expr):
                            push(child)
                elif isinstance(value, expr):
                    push(value)
        self._close()

    def _close(self) -> None:
        self._kinds = {base for cls in self._kinds for base in cls.__mro__}

    def has(self, *kinds: type) -> bool:
        """Whether the tree holds a node of any of `kinds` (a class or a base class)."""
        return any(kind in self._kinds for kind in kinds)

    def note(self, *kinds: type) -> None:
        """Nodes of `kinds` were added to the tree after the census (so `has` stays true)."""
        for cls in kinds:
            self._kinds.update(cls.__mro__)

    @property
    def tables(self) -> list[exp.Table]:
        return self._listed[exp.Table]  # type: ignore[return-value]

    @property
    def ctes(self) -> list[exp.CTE]:
        return self._listed[exp.CTE]  # type: ignore[return-value]

    @property
    def ins(self) -> list[exp.In]:
        return self._listed[exp.In]  # type: ignore[return-value]

    def has_subquery_predicate(self) -> bool:
        """Whether the tree holds an EXISTS, or an IN with a subquery (`x IN (SELECT ...)`)."""
        return self.has(exp.Exists) or any(node.args.get("query") for node in self.ins)


def copied(tree: E) -> tuple[E, Census]:
    """A copy of `tree`, the same as `tree.copy()` makes, and the copy's census, in one walk (a copy walks the
    tree anyway, node by node)."""
    census = Census(None)
    see, listed = census._kinds.add, census._listed
    expr = exp.Expr
    root = tree.__class__()
    queue: deque[tuple[exp.Expr, exp.Expr]] = deque(((tree, root),))
    pop, push = queue.popleft, queue.append
    while queue:  # breadth first, so the census lists nodes in find_all's order
        node, copy = pop()
        cls = node.__class__
        see(cls)
        base = _listed_as.get(cls, _UNSEEN)
        if base is _UNSEEN:
            base = _listed_class(cls)
        if base is not None:
            listed[base].append(copy)  # type: ignore[index]
        # As sqlglot's Expr.__deepcopy__: comments, type and meta deep-copied (meta.NodeMeta copies itself
        # shallowly), the hash kept only by a node whose copy got no child set (sqlglot's set and append clear it).
        if node.comments is not None:
            copy.comments = deepcopy(node.comments)
        if node._type is not None:
            copy._type = deepcopy(node._type)
        meta = node._meta
        if meta is not None:
            copy._meta = NodeMeta(meta) if meta.__class__ is NodeMeta else deepcopy(meta)  # NodeMeta's own deepcopy
        keeps_hash = True
        args = copy.args
        for key, value in node.args.items():
            if isinstance(value, expr):
                child = value.__class__()
                child.parent, child.arg_key = copy, key
                args[key] = child
                push((value, child))
                keeps_hash = False
            elif type(value) is list:
                values: list = []
                for index, item in enumerate(value):
                    if isinstance(item, expr):
                        child = item.__class__()
                        child.parent, child.arg_key, child.index = copy, key, index
                        values.append(child)
                        push((item, child))
                    else:
                        values.append(item)
                args[key] = values
                keeps_hash = keeps_hash and not value
            else:
                args[key] = value
        if keeps_hash and node._hash is not None:
            copy._hash = node._hash
    census._close()
    return root, census
