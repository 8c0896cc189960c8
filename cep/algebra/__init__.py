"""The EP-SPARQL algebra: operators (ops), their text form (sexpr), the
translation from syntax (translate) and rewrites (rewrite)."""

from cep.algebra.ops import *  # noqa: F401,F403
from cep.algebra.query_limits import allow_deep_recursion

# Every stage recurses over a query's trees, up to query_limits.MAX_DEPTH levels
# deep; so does pickling them for Spark's workers, which import this too.
allow_deep_recursion()
