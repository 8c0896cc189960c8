"""The EP-SPARQL algebra: operators (ops), their text form (sexpr), the
translation from syntax (translate) and rewrites (rewrite)."""

from cep.algebra.ops import *  # noqa: F401,F403
