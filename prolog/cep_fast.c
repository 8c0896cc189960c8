/*  cep_fast: the hot loops of the runtime in C (prolog/cep_fast.pl loads
    this library where `make setup` built it and has Prolog versions of the
    same predicates for where it did not).

    c_batch_item(+Text, +NextSweep, +Period, +Ends, -Item) enumerates a
    batch of events. A batch is
    text, one event a line, five tab-separated fields:
        S TAB P TAB O TAB Start TAB End NEWLINE
    S, P and O carry a one-letter tag:
        I<iri>       an IRI, becomes the atom <iri> (taken verbatim, never parsed)
        i<digits>    an integer
        P<text>      any other term, in the Prolog syntax written by cep/prolog.py
    Start and End are integers (epoch milliseconds); lines come ordered by
    End. The items are, for each run of lines with the same End (an
    instant: simultaneous events), sweep(End) if a sweep is due, e(S, P, O,
    Start, End) for each of its events, and end(End) if asked for.

    c_iri_plain(+Atom) is true when the atom holds no character that an
    N-Triples IRIREF must escape, so it can be written between < and > as is.
*/

#include <SWI-Prolog.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static functor_t FUNCTOR_e5;
static functor_t FUNCTOR_sweep1;
static functor_t FUNCTOR_end1;

static int
syntax_error(const char *what)
{ term_t ex = PL_new_term_ref();
  return ( PL_unify_term(ex,
                         PL_FUNCTOR_CHARS, "error", 2,
                           PL_FUNCTOR_CHARS, "cep_error", 1,
                             PL_FUNCTOR_CHARS, "bad_event_batch", 1,
                               PL_CHARS, what,
                           PL_VARIABLE) &&
           PL_raise_exception(ex) );
}

static int
parse_int(const char *s, size_t len, int64_t *out)
{ int64_t v = 0;
  size_t i = 0;
  int neg = 0;

  if ( len == 0 || len > 19 )
    return FALSE;
  if ( s[0] == '-' )
  { neg = 1;
    i = 1;
    if ( len == 1 )
      return FALSE;
  }
  for ( ; i < len; i++ )
  { if ( s[i] < '0' || s[i] > '9' )
      return FALSE;
    v = v * 10 + (s[i] - '0');
  }
  *out = neg ? -v : v;
  return TRUE;
}

static int
put_term_text(term_t t, const char *s, size_t len, int rep)
{ return PL_put_term_from_chars(t, rep|CVT_EXCEPTION, len, s);
}

static int
put_field(term_t t, const char *s, size_t len, int rep)
{ int64_t v;

  if ( len == 0 )
    return syntax_error("empty term field");
  switch ( s[0] )
  { case 'I':
      return PL_put_chars(t, PL_ATOM|rep, len - 1, s + 1);
    case 'i':
      if ( parse_int(s + 1, len - 1, &v) )
        return PL_put_int64(t, v);
      return put_term_text(t, s + 1, len - 1, rep);   /* big integers */
    case 'P':
      return put_term_text(t, s + 1, len - 1, rep);
    default:
      return syntax_error("unknown term tag");
  }
}

/* The state of one enumeration of a batch: a copy of its text (a Prolog
   string may move while we are suspended), where the next line is, and
   the instant (group of simultaneous events) being enumerated. */
typedef struct
{ char   *text;          /* PL_malloc()ed */
  size_t  len;
  int     rep;           /* its encoding: REP_ISO_LATIN_1 or REP_UTF8 */
  size_t  pos;
  int     open;          /* an instant is open */
  int64_t group_end;     /* its End */
  int64_t next_sweep;    /* the first instant from which a sweep is due */
  int64_t period;        /* sweep period */
  int     ends;          /* the rule set wants end(End) items */
} batch;

static void
free_batch(batch *b)
{ PL_free(b->text);
  free(b);
}

/* The next line's five fields; FALSE at the end of the text or on a
   malformed line (then *ok is FALSE and an exception is pending). */
static int
next_line(batch *b, const char *field[5], size_t flen[5], int *ok)
{ const char *end = b->text + b->len;

  *ok = TRUE;
  for (;;)
  { const char *p = b->text + b->pos;
    const char *line_end;
    int n = 0;

    if ( p >= end )
      return FALSE;
    line_end = memchr(p, '\n', end - p);
    if ( !line_end )
      line_end = end;
    b->pos = (line_end - b->text) + 1;
    if ( line_end == p )                  /* an empty line: nothing */
      continue;
    while ( n < 5 )
    { const char *tab = n < 4 ? memchr(p, '\t', line_end - p) : NULL;
      const char *stop = tab ? tab : line_end;
      field[n] = p;
      flen[n] = stop - p;
      n++;
      if ( !tab )
        break;
      p = tab + 1;
    }
    if ( n != 5 )
    { *ok = syntax_error("an event line needs five fields");
      return FALSE;
    }
    return TRUE;
  }
}

static int
unify_item1(term_t item, functor_t f, int64_t value)
{ term_t a = PL_new_term_ref();
  term_t t = PL_new_term_ref();
  return ( PL_put_int64(a, value) &&
           PL_cons_functor_v(t, f, a) &&
           PL_unify(item, t) );
}

/* c_batch_item(+Text, +NextSweep, +Period, +Ends, -Item) is nondet: the
   items of a batch, in order. Before the first event of an instant whose
   End >= NextSweep: sweep(End) (and the next sweep is due at End+Period);
   then e(S, P, O, Start, End) for each event of the instant; after its
   last event, end(End) if Ends is true. Nothing is built for the batch as
   a whole: each item lives until backtracking asks for the next. */
static foreign_t
c_batch_item(term_t text, term_t next, term_t period, term_t ends, term_t item,
             control_t h)
{ batch *b;
  term_t args, t;
  const char *field[5];
  size_t flen[5];
  int64_t ts, te;
  size_t here;
  int ok;

  switch ( PL_foreign_control(h) )
  { case PL_FIRST_CALL:
    { char *s, *latin;
      size_t len;
      int rep, want_ends;
      int64_t next_sweep, every;
      if ( !PL_get_int64_ex(next, &next_sweep) || !PL_get_int64_ex(period, &every) ||
           !PL_get_bool_ex(ends, &want_ends) )
        return FALSE;
      /* A string of ISO Latin-1 text (the batches Python sends are ASCII)
         is copied as it is; any other text is converted to UTF-8. */
      if ( PL_get_string(text, &latin, &len) )
      { if ( !(s = PL_malloc(len + 1)) )
          return PL_resource_error("memory");
        memcpy(s, latin, len);
        rep = REP_ISO_LATIN_1;
      } else if ( PL_get_nchars(text, &len, &s, CVT_ATOM|CVT_STRING|REP_UTF8|BUF_MALLOC|CVT_EXCEPTION) )
      { rep = REP_UTF8;
      } else
        return FALSE;
      if ( !(b = malloc(sizeof(*b))) )
      { PL_free(s);
        return PL_resource_error("memory");
      }
      b->text = s;
      b->len = len;
      b->rep = rep;
      b->pos = 0;
      b->open = FALSE;
      b->group_end = 0;
      b->next_sweep = next_sweep;
      b->period = every;
      b->ends = want_ends;
      break;
    }
    case PL_REDO:
      b = PL_foreign_context_address(h);
      break;
    case PL_PRUNED:
      free_batch(PL_foreign_context_address(h));
      return TRUE;
    default:
      return FALSE;
  }

  here = b->pos;
  if ( !next_line(b, field, flen, &ok) )
  { int rc = FALSE;
    if ( ok && b->open && b->ends )           /* the last instant ends */
      rc = unify_item1(item, FUNCTOR_end1, b->group_end);
    free_batch(b);
    return rc;
  }
  if ( !parse_int(field[3], flen[3], &ts) || !parse_int(field[4], flen[4], &te) )
  { free_batch(b);
    return syntax_error("bad time stamp");
  }
  if ( b->open && te != b->group_end )
  { if ( te < b->group_end )
    { free_batch(b);
      return syntax_error("events not ordered by end time");
    }
    b->open = FALSE;
    if ( b->ends )
    { b->pos = here;                          /* this line again, next time */
      if ( !unify_item1(item, FUNCTOR_end1, b->group_end) )
      { free_batch(b);
        return FALSE;
      }
      PL_retry_address(b);
    }
  }
  if ( !b->open )
  { b->open = TRUE;
    b->group_end = te;
    if ( te >= b->next_sweep )
    { b->next_sweep = te + b->period;
      b->pos = here;                          /* the event comes after sweep(End) */
      if ( !unify_item1(item, FUNCTOR_sweep1, te) )
      { free_batch(b);
        return FALSE;
      }
      PL_retry_address(b);
    }
  }
  args = PL_new_term_refs(5);
  t = PL_new_term_ref();
  if ( !put_field(args + 0, field[0], flen[0], b->rep) ||
       !put_field(args + 1, field[1], flen[1], b->rep) ||
       !put_field(args + 2, field[2], flen[2], b->rep) ||
       !PL_put_int64(args + 3, ts) || !PL_put_int64(args + 4, te) ||
       !PL_cons_functor_v(t, FUNCTOR_e5, args) ||
       !PL_unify(item, t) )
  { free_batch(b);
    return FALSE;
  }
  PL_retry_address(b);
}

/* The characters IRIREF does not allow unescaped (N-Triples, [18]). */
static int
iri_forbidden(unsigned int c)
{ return c <= 0x20 || c == '<' || c == '>' || c == '"' || c == '{' || c == '}' ||
         c == '|' || c == '^' || c == '`' || c == '\\';
}

static foreign_t
c_iri_plain(term_t atom)
{ char *s;
  size_t len;

  if ( !PL_get_nchars(atom, &len, &s, CVT_ATOM|REP_UTF8|BUF_STACK) )
    return FALSE;
  for ( size_t i = 0; i < len; i++ )   /* bytes of UTF-8: multibyte ones are >= 0x80 */
  { if ( iri_forbidden((unsigned char)s[i]) )
      return FALSE;
  }
  return TRUE;
}

install_t
install_cep_fast(void)
{ FUNCTOR_e5 = PL_new_functor(PL_new_atom("e"), 5);
  FUNCTOR_sweep1 = PL_new_functor(PL_new_atom("sweep"), 1);
  FUNCTOR_end1 = PL_new_functor(PL_new_atom("end"), 1);
  PL_register_foreign("c_batch_item", 5, c_batch_item, PL_FA_NONDETERMINISTIC);
  PL_register_foreign("c_iri_plain", 1, c_iri_plain, 0);
}
