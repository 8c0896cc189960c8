"""Syntax error messages for the person who typed the query.

    syntax_error(exc, text, filename, parser) -> QueryError

Takes one of lark's UnexpectedInput exceptions and returns a QueryError
placed at the offending token: what was found, what could have stood there
in words ("a variable, an IRI or a literal") and, where the parser state
tells, which part of the query was being read ("the object of the triple").

An LALR parser may reduce on a token before it finds the token wrong, and
then knows less about what was expected; so the text is parsed again, step
by step, up to the token, and the state just before it is asked: every
terminal is tried on a copy of that state. The part of the query is found
the way lark's `match_examples` does: that state is compared with the states
the small erroneous EXAMPLES below stop in.
"""

from __future__ import annotations

from functools import lru_cache

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput

from cep.algebra.ops import KEYWORDS, Pos
from cep.errors import QueryError

END = "$END"

# How a single expected terminal reads, in the order they are listed;
# keywords read as themselves and come after these.
WORDS = {
    "VAR": "a variable", "IRIREF": "an IRI", "PNAME": "a prefixed name",
    "BARE_NAME": "a name", "STRING": "a string", "NUMBER": "a number",
    "SIGNED_NUMBER": "a number", "BLANK_NODE_LABEL": "a blank node", "ANON": "a blank node",
    "LANGTAG": "a language tag",
    "RBRACE": "'}'", "RPAR": "')'", "RSQB": "']'", "DOT": "'.'", "SEMICOLON": "';'",
    "COMMA": "','", "LBRACE": "'{'", "LPAR": "'('", "LSQB": "'['", "DTMARK": "'^^'",
    "OR": "'||'", "AND": "'&&'", "EQ": "'='", "NE": "'!='", "LT": "'<'", "GT": "'>'",
    "LE": "'<='", "GE": "'>='", "PLUS": "'+'", "MINUS": "'-'", "STAR": "'*'",
    "SLASH": "'/'", "BANG": "'!'", "A": "'a'", "ANNOTATION": "an annotation",
    "PIPE": "'|'", "CARET": "'^'", "QMARK": "'?'",
    "TIME_SPAN": "a time span such as 10m, 1h, 30s, 500ms, 2d or PT5M",
}
ORDER = {name: i for i, name in enumerate(WORDS)}

EXPRESSION_START = {"BANG", "PLUS", "MINUS", "LPAR", "VAR", "NUMBER", "STRING", "TRUE",
                    "FALSE", "IRIREF", "PNAME", "BARE_NAME", "COUNT", "SUM", "AVG", "MIN", "MAX", "SAMPLE",
                    "GROUP_CONCAT"}
IRI = {"IRIREF", "PNAME", "BARE_NAME", "A"}
LITERAL = {"STRING", "NUMBER", "SIGNED_NUMBER", "TRUE", "FALSE"}
BLANK = {"BLANK_NODE_LABEL", "ANON", "LSQB"}
OPERATORS = {"OR", "AND", "EQ", "NE", "LT", "GT", "LE", "GE", "PLUS", "MINUS", "STAR",
             "SLASH", "IN", "NOT"}
CHAIN_OPS = set(KEYWORDS)  # the operators written between two groups
QUERY_START = {"SELECT", "CONSTRUCT", "ASK", "DESCRIBE", "DELETE", "INSERT", "REGISTER", "PREFIX",
               "BASE", "ANNOTATION"}
HIDDEN = {"SEQOPTIONAL", "OPTIONALEQUALS", "NAMED",  # recognized only to be rejected
          "MINUS_KW", "BIND", "VALUES", "SERVICE", "EXISTS",
          "ORDER", "LIMIT", "OFFSET", "REDUCED",  # optional solution modifiers
          "RSTREAM", "ISTREAM", "DSTREAM"}  # optional words that would crowd a message


def phrases(expected) -> list:
    """The expected terminals in words: groups of terminals read as one
    phrase ("an expression", "a literal"), the rest one by one."""
    left = set(expected) - HIDDEN
    if "RBRACE" in left:  # a Streaming SPARQL window may end any group: it would crowd the message
        left.discard("WINDOW")
    if "IN" not in left:  # NOT starts NOT EXISTS, which is refused
        left.discard("NOT")
    out = []

    def take(trigger, members, words):
        nonlocal left
        if trigger <= left:
            out.append(words)
            left -= members

    take({"OR", "AND"}, OPERATORS, "an operator")
    if "CARET" in left:  # a verb: ! starts a negated property set, "a property path"
        left.discard("BANG")
    if "BANG" in left and "MINUS" not in left:
        # the start of a SELECT clause: an unparenthesized item takes no sign
        out += ["a variable", "(expression AS ?name)"]
        left -= EXPRESSION_START
    take({"BANG"}, EXPRESSION_START, "an expression")
    if {"BARE_NAME", "LPAR"} <= left and not {"VAR", "CARET"} & left:
        out.append("'(' or a function call")
        left -= {"BARE_NAME", "LPAR", "PNAME", "IRIREF"}
    take({"VAR"}, {"VAR"}, "a variable")
    # a blank node is a variable in disguise; a list `( ... )` a blank node,
    # and `()` the IRI rdf:nil
    take({"IRIREF"}, IRI | BLANK | ({"NIL", "LPAR"} if "NIL" in left else set()), "an IRI")
    if left & LITERAL == {"NUMBER"}:  # a count or a size (LIMIT, WINDOW ELEMS n)
        out.append("a whole number")
        left.discard("NUMBER")
    take({"NUMBER"}, LITERAL, "a literal")
    take(BLANK - {"LSQB"}, BLANK, "a blank node")
    take({"CARET"}, {"CARET", "LPAR"}, "a property path")
    take({"QMARK"}, {"PLUS", "STAR", "QMARK", "SLASH", "PIPE"}, "a path operator")
    take(CHAIN_OPS, CHAIN_OPS, "an operator such as SEQ or UNION")
    take(QUERY_START, QUERY_START, "another query")
    rest = sorted(left, key=lambda t: (t == END, ORDER.get(t, len(ORDER)), t))
    out += ["the end of the file" if t == END else WORDS.get(t, t) for t in rest]
    return out


def _join(words: list) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


# Small erroneous examples; the parser state each one stops in names the
# part of a query being read. tests/unit/test_parse_errors.py checks that
# each fails and that no state is claimed by two parts.
EXAMPLES = {
    "the object of the triple": [
        "SELECT * { ?s ?p }",
        "SELECT * { ?s :p }",
        "SELECT * { ?s p }",
        "SELECT * { ?s <p> }",
        "SELECT * { ?s a }",
        "SELECT * { ?s ?p ?o, }",
        "SELECT * { ?s ?p ?o ; ?q }",
        "CONSTRUCT { ?s ?p } { ?s ?p ?o }",
        "SELECT * { ?s ?p [ ?q ] }",
    ],
    "the predicate of the triple": [
        "SELECT * { ?s }",
        "SELECT * { :s }",
        "SELECT * { s }",
        "SELECT * { <s> }",
        "SELECT * { [] }",
        "SELECT * { _:s }",
        "SELECT * { ?s ?p ?o ; 5 }",
        "SELECT * { [ 5 ] ?p ?o }",
        "SELECT * { ?s ?p [ 5 ] }",
    ],
    "the property path": [
        "SELECT * { ?s :p/ }",
        "SELECT * { ?s :p| }",
        "SELECT * { ?s ^ }",
        "SELECT * { ?s ( }",
        "SELECT * { ?s (:p| }",
    ],
    "the FILTER condition": [
        "SELECT * { ?s ?p ?o FILTER }",
        "SELECT * { ?s ?p ?o FILTER ( ) }",
    ],
    "the operand of an operator": [
        "SELECT * { ?s ?p ?o FILTER ( ?o < ) }",
        "SELECT * { ?s ?p ?o FILTER ( ?o && ) }",
        "SELECT * { ?s ?p ?o FILTER ( ?o || ) }",
        "SELECT * { ?s ?p ?o FILTER ( ! ) }",
        "SELECT * { ?s ?p ?o FILTER ( ?o * ) }",
        "SELECT * { ?s ?p ?o FILTER ( ?o + ) }",
        "SELECT * { ?s ?p ?o FILTER ( ?o = ) }",
    ],
    "the arguments of a function": [
        "SELECT * { ?s ?p ?o FILTER ( STR ( ?o ) }",
        "SELECT * { ?s ?p ?o FILTER ( STR ( ?o , ) ) }",
        "SELECT * { ?s ?p ?o FILTER ( STR ?o ) }",
    ],
    "the variable after AS": [
        "SELECT (?s AS) { ?s ?p ?o }",
        "SELECT ?s + 1 AS { ?s ?p ?o }",
    ],
    "the SELECT clause": [
        "SELECT { ?s ?p ?o }",
        "SELECT DISTINCT { ?s ?p ?o }",
    ],
    "a group graph pattern": [
        "SELECT * WHERE ?s ?p ?o",
        "SELECT * ?s ?p ?o",
        "SELECT * { ?s ?p ?o } SEQ ?s",
        "SELECT * { { ?s ?p ?o } SEQ ?s }",
        "SELECT * { ?s ?p ?o OPTIONAL ?s }",
        "SELECT * { GRAPH <s> ?s }",
    ],
    "the stream after GRAPH, such as GRAPH <http://example.org/stream> { ... }": [
        "SELECT * { GRAPH { ?s ?p ?o } }",
    ],
    "the duration after WITHIN, a string such as \"PT30M\"": [
        "SELECT * { ?s ?p ?o WITHIN 5 }",
        "SELECT * { ?s ?p ?o } WITHIN 5",
    ],
    "the deadline after NOTSEQ, a string such as \"PT10M\"": [
        "SELECT * { ?s ?p ?o } NOTSEQ { ?s ?p ?o }",
        "SELECT * { { ?s ?p ?o } NOTSEQ 5 { ?s ?p ?o } }",
    ],
    "the template of the CONSTRUCT": [
        "CONSTRUCT ",
        "CONSTRUCT { ?s ?p ?o . . } { ?s ?p ?o }",
    ],
    "REGISTER QUERY name AS ... or REGISTER STREAM name AS ...": [
        "REGISTER SELECT",
        "REGISTER QUERY AS",
        "REGISTER QUERY q SELECT",
    ],
    "PREFIX name: <IRI>": [
        "PREFIX ?x",
        "PREFIX : ?x",
    ],
    "BASE <IRI>": [
        "BASE ?x",
    ],
    "a Streaming SPARQL window: WINDOW RANGE 30 MINUTE SLIDE [5 MINUTE], WINDOW RANGE 1 HOUR FIXED "
    "or WINDOW ELEMS 100": [
        "SELECT * FROM STREAM <s> WINDOW WHERE { ?s ?p ?o }",
        "SELECT * FROM STREAM <s> WINDOW RANGE WHERE { ?s ?p ?o }",
        "SELECT * FROM STREAM <s> WINDOW ELEMS WHERE { ?s ?p ?o }",
        "SELECT * FROM STREAM <s> WINDOW RANGE 10 WHERE { ?s ?p ?o }",
        "SELECT * FROM STREAM <s> WINDOW RANGE 10 S WHERE { ?s ?p ?o }",
        "SELECT * { ?s ?p ?o WINDOW }",
        "SELECT * { ?s ?p ?o WINDOW RANGE }",
        "SELECT * { ?s ?p ?o WINDOW ELEMS }",
        "SELECT * { ?s ?p ?o WINDOW RANGE 10 }",
        "SELECT * { ?s ?p ?o WINDOW RANGE 10 S }",
        *(f"SELECT * FROM STREAM <s> WINDOW RANGE 10 {unit} x" for unit in ("MS", "MINUTE", "HOUR", "DAY", "WEEK")),
        *(f"SELECT * {{ ?s ?p ?o WINDOW RANGE 10 {unit} x }}" for unit in ("MS", "MINUTE", "HOUR", "DAY", "WEEK")),
    ],
    "the background file after FROM, such as FROM <ontology.ttl>": [
        "SELECT * FROM ?x",
        "SELECT * FROM { ?s ?p ?o }",
        "SELECT * FROM NAMED ?x",
    ],
}

# Where a FROM goes, for one written elsewhere in a query
FROM_PLACE = ("FROM <file> goes after the SELECT clause (or the CONSTRUCT or DELETE/INSERT "
              "template) and before WHERE")


def _failure(parser, text: str):
    """Parse `text` step by step: (the exception, the parser state just
    before the offending token), or None if the text parses."""
    interactive = parser.parse_interactive(text)
    state = interactive.parser_state
    tokens = interactive.lexer_thread.lex(state)
    last = None
    try:
        while True:
            before = state.copy(deepcopy_values=False)
            token = next(tokens, None)
            if token is None:
                break
            state.feed_token(token)
            last = token
        end = Token.new_borrow_pos(END, "", last) if last is not None else Token(END, "")
        state.feed_token(end, True)
    except UnexpectedInput as exc:
        return exc, before
    return None


def example_failures(parser) -> list:
    """(label, example, position of the state it stops in, or None if it parses)."""
    out = []
    for label, examples in EXAMPLES.items():
        for example in examples:
            failure = _failure(parser, example)
            out.append((label, example, failure and failure[1].position))
    return out


@lru_cache(maxsize=4)
def _example_states(parser) -> dict:
    states = {}
    for label, _, position in example_failures(parser):
        if position is not None:
            states.setdefault(position, label)
    return states


def _accepts(parser, state) -> set:
    """The terminals the parser takes in `state`: each is fed to a copy."""
    out = set()
    for name in [t.name for t in parser.terminals] + [END]:
        trial = state.copy(deepcopy_values=False)
        try:
            trial.feed_token(Token(name, ""), name == END)
        except UnexpectedInput:
            continue
        out.add(name)
    return out - set(parser.lexer_conf.ignore)  # (a parser loaded by Lark.load has no ignore_tokens)


def line_col(text: str, offset: int):
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def syntax_error(exc: UnexpectedInput, text: str, filename: str, parser) -> QueryError:
    failure = _failure(parser, text)
    if failure is not None:
        exc, before = failure
    else:  # pragma: no cover - the step-by-step parse fails as the parse did
        before = None
    expected = _accepts(parser, before) if before is not None else set()
    if isinstance(exc, UnexpectedCharacters):
        special = _unterminated_string(text, exc.pos_in_stream)
        if special is not None:
            message, offset = special
            return QueryError(message, Pos(filename, *line_col(text, offset)))
        pos = Pos(filename, exc.line, exc.column)
        found = f"character {_quote(text[exc.pos_in_stream])}"
    elif exc.token.type == END:
        # just after the last token: trailing comments and blank lines are no help
        end = exc.token
        pos = Pos(filename, end.end_line or 1, end.end_column or 1)
        found = "end of file"
    else:
        token = exc.token
        pos = Pos(filename, token.line, token.column)
        if token.type == "LT" and "IRIREF" in expected:
            return QueryError(_bad_iri(text, token.start_pos), pos)
        # a stray `@...` lexes as an annotation line: show its first word only
        found = _quote(str(token).split()[0] if token.type == "ANNOTATION" else str(token))
        if str(token).upper() == "FROM" and (END in expected or expected == {"LBRACE"}):
            # between queries, or after WHERE: a dataset clause out of place
            return QueryError(f"unexpected {found} \u2014 {FROM_PLACE}", pos)
    message = f"unexpected {found}"
    words = phrases(expected)
    if words:
        message += " \u2014 expected " + _join(words)
    context = _example_states(parser).get(before.position) if before is not None else None
    if context:
        message += f" ({context})"
    return QueryError(message, pos)


def _quote(value: str) -> str:
    if len(value) > 40:
        value = value[:37] + "..."
    return f"'{value}'"


def _unterminated_string(text: str, offset: int):
    """(message, offset) if the lexer stopped at a string that does not end."""
    ch = text[offset]
    if ch not in "\"'":
        return None
    if text.startswith(ch * 2, offset - 2) and not text.startswith(ch, offset - 3):
        # `"""abc` reads as the empty string `""` followed by `"abc`
        return f"unterminated string: no closing {ch * 3}", offset - 2
    return f"unterminated string: no closing {ch} on this line", offset


def _bad_iri(text: str, offset: int) -> str:
    line = text[offset:].split("\n", 1)[0]
    if ">" not in line:
        return "unterminated IRI: no closing > on this line"
    iri = line[: line.index(">") + 1]
    return f"malformed IRI {iri}: an IRI cannot hold spaces, quotes or any of {{}}|^`\\"
