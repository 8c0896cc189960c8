"""EP-SPARQL syntax: the grammar (epsparql.lark), the cached parser and its
error messages. `parse(text, filename)` returns lark's syntax tree."""

from cep.syntax.parser import parse

__all__ = ["parse"]
