/*  cep_fast: decode a batch of events into Prolog terms in one call.

    A batch is text, one event a line, five tab-separated fields:
        S TAB P TAB O TAB Start TAB End NEWLINE
    S, P and O carry a one-letter tag:
        I<iri>       an IRI, becomes the atom <iri> (taken verbatim, never parsed)
        i<digits>    an integer
        P<text>      any other term, in the Prolog syntax written by cep/prolog.py
    Start and End are integers (epoch milliseconds).

    cep_decode_events(+Text, -Events) unifies Events with the list of
    e(S, P, O, Start, End) terms. prolog/cep_runtime.pl has the same decoder
    in Prolog, used where this library was not built.
*/

#include <SWI-Prolog.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static functor_t FUNCTOR_e5;

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
put_term_text(term_t t, const char *s, size_t len)
{ char small[256];
  char *buf = len < sizeof(small) ? small : malloc(len + 1);
  int rc;

  if ( !buf )
    return PL_resource_error("memory");
  memcpy(buf, s, len);
  buf[len] = '\0';
  rc = PL_chars_to_term(buf, t);
  if ( buf != small )
    free(buf);
  return rc;
}

static int
put_field(term_t t, const char *s, size_t len)
{ int64_t v;

  if ( len == 0 )
    return syntax_error("empty term field");
  switch ( s[0] )
  { case 'I':
      return PL_put_chars(t, PL_ATOM|REP_UTF8, len - 1, s + 1);
    case 'i':
      if ( parse_int(s + 1, len - 1, &v) )
        return PL_put_int64(t, v);
      return put_term_text(t, s + 1, len - 1);   /* big integers */
    case 'P':
      return put_term_text(t, s + 1, len - 1);
    default:
      return syntax_error("unknown term tag");
  }
}

static foreign_t
cep_decode_events(term_t text, term_t events)
{ char *s;
  size_t len;
  term_t tail = PL_copy_term_ref(events);
  term_t head = PL_new_term_ref();
  term_t args = PL_new_term_refs(5);
  term_t event = PL_new_term_ref();
  const char *p, *end;

  if ( !PL_get_nchars(text, &len, &s, CVT_ATOM|CVT_STRING|REP_UTF8|BUF_MALLOC|CVT_EXCEPTION) )
    return FALSE;
  p = s;
  end = s + len;
  while ( p < end )
  { const char *field[5];
    size_t flen[5];
    int n = 0;
    const char *line_end = memchr(p, '\n', end - p);

    if ( !line_end )
      line_end = end;
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
    { PL_free(s);
      return syntax_error("an event line needs five fields");
    }
    { int64_t ts, te;
      if ( !put_field(args + 0, field[0], flen[0]) ||
           !put_field(args + 1, field[1], flen[1]) ||
           !put_field(args + 2, field[2], flen[2]) )
      { PL_free(s);
        return FALSE;
      }
      if ( !parse_int(field[3], flen[3], &ts) || !parse_int(field[4], flen[4], &te) )
      { PL_free(s);
        return syntax_error("bad time stamp");
      }
      if ( !PL_put_int64(args + 3, ts) || !PL_put_int64(args + 4, te) ||
           !PL_cons_functor_v(event, FUNCTOR_e5, args) ||
           !PL_unify_list(tail, head, tail) ||
           !PL_unify(head, event) )
      { PL_free(s);
        return FALSE;
      }
    }
    p = line_end + 1;
  }
  PL_free(s);
  return PL_unify_nil(tail);
}

install_t
install_cep_fast(void)
{ FUNCTOR_e5 = PL_new_functor(PL_new_atom("e"), 5);
  PL_register_foreign("cep_decode_events", 2, cep_decode_events, 0);
}
