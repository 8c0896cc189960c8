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
    Start and End are integers of 64 bits (epoch milliseconds; any other
    text is a bad_event_batch error, as in the Prolog version); lines come
    ordered by End. The items are, for each run of lines with the same End (an
    instant: simultaneous events), sweep(End) if a sweep is due, e(S, P, O,
    Start, End) for each of its events, and end(End) if asked for.

    c_iri_plain(+Atom) is true when the atom holds no character that an
    N-Triples IRIREF must escape, so it can be written between < and > as is.

    c_answer_text(+Rows, -Text) writes the answer lines of a batch.

    c_band(+Value, -Band) is the band of a number for the range index of
    a goal store (cep_values:cep_band/2, the same double arithmetic),
    where the number is an integer, a double or a decimal whose parts are
    exact in a double; it fails for any other value, which the Prolog
    version then takes.

    c_source(-Digest) is the SHA-256 (hex) of the cep_fast.c the library
    was built from, which cep/runtime/native.py compiles in: prolog/cep_fast.pl
    uses no library built from another version of this file (whose
    predicates may be missing or differ).
*/

/* With GMP's header (Debian: libgmp-dev) a decimal of a batch is made as
   a number (PL_unify_mpq, declared by SWI-Prolog.h once gmp.h is in);
   without it, by the parser from its text. cep/runtime/native.py builds
   with it where it can (CEP_NO_GMP: without). PL_get_mpq is not used: in
   SWI-Prolog 9.0.4 it crashes. */
#if !defined(CEP_NO_GMP) && defined(__has_include)
#if __has_include(<gmp.h>)
#include <gmp.h>
#define CEP_GMP 1
#endif
#endif
#include <SWI-Prolog.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <math.h>

#ifndef CEP_FAST_SOURCE
#define CEP_FAST_SOURCE "unknown"    /* built otherwise than by cep/runtime/native.py */
#endif

static functor_t FUNCTOR_e5;
static functor_t FUNCTOR_sweep1;
static functor_t FUNCTOR_end1;
static functor_t FUNCTOR_dec1;
static functor_t FUNCTOR_lv3;

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

/* An integer that fits in 64 bits; FALSE for any other text (a longer
   integer is read by the parser: 19 digits can exceed 64 bits, which was
   taken for a negative number) */
static int
parse_int(const char *s, size_t len, int64_t *out)
{ uint64_t v = 0;                               /* 19 digits fit in 64 unsigned bits */
  size_t i = 0;
  int neg = 0;

  if ( len == 0 || len > 20 )
    return FALSE;
  if ( s[0] == '-' )
  { neg = 1;
    i = 1;
    if ( len == 1 )
      return FALSE;
  }
  if ( len - i > 19 )
    return FALSE;
  for ( ; i < len; i++ )
  { if ( s[i] < '0' || s[i] > '9' )
      return FALSE;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  if ( v > (uint64_t)INT64_MAX + neg )
    return FALSE;
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;   /* 0 - 2^63 wraps to INT64_MIN */
  return TRUE;
}

/* A term from its text. A text that is a number alone is read in
   parentheses: PL_put_term_from_chars() reads such a text without the
   parser and, where it is a rational or an integer beyond 64 bits, never
   frees the GMP number it made on the way (SWI-Prolog 9.0.4: 64 bytes a
   rational, so a stream of decimals grew the process by 55 MB a million
   events); the parser frees its own. */
static int
put_term_text(term_t t, const char *s, size_t len, int rep)
{ char small[64], *buf;
  int rc;

  if ( len == 0 || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) )
    return PL_put_term_from_chars(t, rep|CVT_EXCEPTION, len, s);
  if ( len + 2 <= sizeof(small) )
    buf = small;
  else if ( !(buf = malloc(len + 2)) )
    return PL_resource_error("memory");
  buf[0] = '(';
  memcpy(buf + 1, s, len);
  buf[len + 1] = ')';
  rc = PL_put_term_from_chars(t, rep|CVT_EXCEPTION, len + 2, buf);
  if ( buf != small )
    free(buf);
  return rc;
}

#ifdef CEP_GMP
/* An integer of at most 18 digits (so it fits in 64 bits), optionally
   signed with - */
static int
parse_small_int(const char *s, size_t len, int64_t *out)
{ return len > 0 && len - (s[0] == '-') <= 18 && parse_int(s, len, out);
}

static int
gcd_is_one(int64_t n, int64_t d)
{ uint64_t a = n < 0 ? -(uint64_t)n : (uint64_t)n, b = (uint64_t)d;

  while ( b )
  { uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a == 1;
}

/* dec(N) or dec(NrD), a decimal as cep/runtime/batch.py writes it (N/D
   in lowest terms, D > 1), made without the parser, which costs a
   microsecond a value (W2's ticks: half the decoding of a batch). FALSE
   for any other text, which the parser reads. */
static int
put_decimal_text(term_t t, const char *s, size_t len)
{ const char *r;
  int64_t n, d;
  term_t v;
  mpq_t q;                                      /* made and freed here: SWI-Prolog's GMP memory */
  int rc;                                       /* functions keep no GMP number across calls */

  if ( len < 6 || memcmp(s, "dec(", 4) != 0 || s[len - 1] != ')' )
    return FALSE;
  s += 4;
  len -= 5;
  if ( !(r = memchr(s, 'r', len)) )
    return ( parse_small_int(s, len, &n) && (v = PL_new_term_ref()) &&
             PL_put_int64(v, n) && PL_cons_functor_v(t, FUNCTOR_dec1, v) );
  if ( !parse_small_int(s, r - s, &n) || r[1] == '-' ||
       !parse_small_int(r + 1, len - (r - s) - 1, &d) || d <= 1 || !gcd_is_one(n, d) )
    return FALSE;
  mpq_init(q);
  mpz_set_si(mpq_numref(q), n);               /* int64_t is long on the platforms built for */
  mpz_set_si(mpq_denref(q), d);
  rc = ( (v = PL_new_term_ref()) && PL_unify_mpq(v, q) && PL_cons_functor_v(t, FUNCTOR_dec1, v) );
  mpq_clear(q);
  return rc;
}
#endif

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
#ifdef CEP_GMP
      if ( put_decimal_text(t, s + 1, len - 1) )
        return TRUE;
      if ( PL_exception(0) )
        return FALSE;
#endif
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
    return syntax_error("a time that is not an integer of 64 bits");
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

/* ------------------------------------------------------------------
   Answer text: the rows of a batch, one line each,
       Q TAB Start TAB End (TAB Field)* NEWLINE
   where a Field is the canonical N-Triples text of a value (see
   cep_values:cep_nt/2), or empty for an unbound variable. IRIs,
   integers, decimals and the plain lexical forms of lv/3 are written
   here; other values by calling cep_nt/2.
   ------------------------------------------------------------------ */

typedef struct
{ char   *data;
  size_t  len;
  size_t  size;
  int     nonascii;       /* a byte >= 0x80 was written */
} outbuf;

static int
out_reserve(outbuf *o, size_t more)
{ if ( o->len + more > o->size )
  { size_t size = o->size ? o->size : 1 << 16;
    char *data;
    while ( size < o->len + more )
      size *= 2;
    if ( !(data = realloc(o->data, size)) )
      return FALSE;
    o->data = data;
    o->size = size;
  }
  return TRUE;
}

static int
out_bytes(outbuf *o, const char *s, size_t len)
{ if ( !out_reserve(o, len) )
    return FALSE;
  memcpy(o->data + o->len, s, len);
  o->len += len;
  return TRUE;
}

static int
out_int(outbuf *o, int64_t v)
{ char tmp[24];
  char *p = tmp + sizeof(tmp);
  uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

  do
  { *--p = (char)('0' + u % 10);
    u /= 10;
  } while ( u );
  if ( v < 0 )
    *--p = '-';
  return out_bytes(o, p, tmp + sizeof(tmp) - p);
}

/* UTF-8 text, as it is */
static int
out_utf8(outbuf *o, const char *s, size_t len)
{ for ( size_t i = 0; i < len; i++ )
  { if ( (unsigned char)s[i] >= 0x80 )
    { o->nonascii = TRUE;
      break;
    }
  }
  return out_bytes(o, s, len);
}

/* An IRI: its UTF-8 bytes, with \uXXXX for what IRIREF does not allow
   (all ASCII, so a byte test is a character test) */
static int
out_iri(outbuf *o, const char *s, size_t len)
{ if ( !out_reserve(o, len * 6 + 2) )
    return FALSE;
  o->data[o->len++] = '<';
  for ( size_t i = 0; i < len; i++ )
  { unsigned char c = (unsigned char)s[i];
    if ( iri_forbidden(c) )
      o->len += sprintf(o->data + o->len, "\\u%04X", c);
    else
    { if ( c >= 0x80 )
        o->nonascii = TRUE;
      o->data[o->len++] = (char)c;
    }
  }
  o->data[o->len++] = '>';
  return TRUE;
}

static predicate_t PRED_cep_nt;

/* Any other value: its text from cep_values:cep_nt/2 */
static int
out_value(outbuf *o, term_t value)
{ fid_t fid = PL_open_foreign_frame();
  term_t args = PL_new_term_refs(2);
  char *s;
  size_t len;
  int rc = ( fid &&
             PL_put_term(args, value) &&
             PL_call_predicate(NULL, PL_Q_PASS_EXCEPTION, PRED_cep_nt, args) &&
             PL_get_nchars(args + 1, &len, &s, CVT_STRING|REP_UTF8|BUF_MALLOC|CVT_EXCEPTION) );
  if ( rc )
  { rc = out_utf8(o, s, len);
    PL_free(s);
  }
  if ( fid )
  { if ( rc )
      PL_discard_foreign_frame(fid);
    else
      PL_close_foreign_frame(fid);             /* keeps the exception */
  }
  return rc;
}

#define XSD_DECIMAL "\"^^<http://www.w3.org/2001/XMLSchema#decimal>"

/* The digits of a decimal N/D (D > 0 a power-of-two-times-power-of-five
   denominator, as xsd:decimal values have) in canonical form: all digits,
   at least one after the point, no trailing zero beyond it. FALSE where
   the numbers do not fit (cep_nt/2 then writes it). The integer part is
   |N| div D; each digit after the point is the next remainder times ten
   div D (D =< 10^18, so ten times a remainder fits in 64 bits). */
static int
out_decimal_parts(outbuf *o, int64_t n, int64_t d)
{ int a = 0, b = 0;
  int64_t r = d;
  uint64_t u = n < 0 ? -(uint64_t)n : (uint64_t)n;
  uint64_t ud = (uint64_t)d, rem;
  char tmp[48];
  char *p = tmp + 24;                           /* integer digits before, fraction after */
  char *q = p;
  int places;

  while ( r % 2 == 0 ) { r /= 2; a++; }
  while ( r % 5 == 0 ) { r /= 5; b++; }
  places = a > b ? a : b;
  if ( r != 1 || places > 18 )
    return FALSE;
  rem = u % ud;
  u /= ud;
  do
  { *--p = (char)('0' + (int)(u % 10));
    u /= 10;
  } while ( u );
  if ( n < 0 )
    *--p = '-';
  *q++ = '.';
  if ( places == 0 )
    *q++ = '0';
  for ( int i = 0; i < places; i++ )
  { rem *= 10;
    *q++ = (char)('0' + (int)(rem / ud));
    rem %= ud;
  }
  return ( out_bytes(o, "\"", 1) && out_bytes(o, p, q - p) &&
           out_bytes(o, XSD_DECIMAL, sizeof(XSD_DECIMAL) - 1) );
}

/* Integers of at most 53 bits are exact in a double: their quotient is
   then the double nearest the rational, as SWI-Prolog's float/1 gives */
#define EXACT_IN_DOUBLE(n) ((n) >= -(INT64_C(1) << 53) && (n) <= (INT64_C(1) << 53))

/* The numerator and denominator of an integer or a rational that fit in
   64 bits */
static int
rational_parts(term_t r, int64_t *n, int64_t *d)
{ char *s, *slash, *end;
  size_t len;

  if ( PL_get_int64(r, n) )
  { *d = 1;
    return TRUE;
  }
  if ( PL_term_type(r) != PL_RATIONAL ||
       !PL_get_nchars(r, &len, &s, CVT_RATIONAL|BUF_STACK) ||
       !(slash = strchr(s, 'r')) || slash - s > 18 || strlen(slash + 1) > 18 )
    return FALSE;
  *n = strtoll(s, &end, 10);
  if ( end != slash )
    return FALSE;
  *d = strtoll(slash + 1, &end, 10);
  return !*end && *d > 0;
}

/* dec(R) with R an integer or a rational that fit in 64 bits */
static int
out_decimal(outbuf *o, term_t f, term_t r)
{ int64_t n, d;

  if ( !PL_is_functor(f, FUNCTOR_dec1) || !PL_get_arg(1, f, r) || !rational_parts(r, &n, &d) )
    return -1;
  if ( d == 1 )
    return out_decimal_parts(o, n, 1);
  return out_decimal_parts(o, n, d) ? TRUE : -1;
}

/* lv(Lexical, Datatype, Value), another lexical form of a value, where
   the lexical form is ASCII with nothing N-Triples escapes (1.50, 007)
   and the datatype IRI ASCII with nothing IRIREF forbids: its text as
   cep_nt/2 writes it. -1 for any other term. */
static int
out_lexical_form(outbuf *o, term_t f, term_t a)
{ char *lex, *iri;
  size_t llen, ilen;

  if ( !PL_is_functor(f, FUNCTOR_lv3) ||
       !PL_get_arg(1, f, a) || !PL_get_nchars(a, &llen, &lex, CVT_STRING|BUF_STACK) )
    return -1;
  for ( size_t i = 0; i < llen; i++ )
  { unsigned char c = (unsigned char)lex[i];
    if ( c < 0x20 || c >= 0x7f || c == '"' || c == '\\' )
      return -1;
  }
  if ( !PL_get_arg(2, f, a) || !PL_get_nchars(a, &ilen, &iri, CVT_ATOM|BUF_STACK) )
    return -1;
  for ( size_t i = 0; i < ilen; i++ )
  { if ( (unsigned char)iri[i] >= 0x80 || iri_forbidden((unsigned char)iri[i]) )
      return -1;
  }
  return ( out_bytes(o, "\"", 1) && out_bytes(o, lex, llen) && out_bytes(o, "\"^^<", 4) &&
           out_bytes(o, iri, ilen) && out_bytes(o, ">", 1) );
}

static int
out_field(outbuf *o, term_t f)
{ switch ( PL_term_type(f) )
  { case PL_VARIABLE:
      return TRUE;
    case PL_ATOM:
    { atom_t a;
      size_t len;
      const char *latin;
      char *s;
      if ( !PL_get_atom(f, &a) )
        return FALSE;
      if ( (latin = PL_atom_nchars(a, &len)) )
      { int ascii = TRUE;
        for ( size_t i = 0; i < len; i++ )
        { if ( (unsigned char)latin[i] >= 0x80 )
          { ascii = FALSE;
            break;
          }
        }
        if ( ascii )
          return out_iri(o, latin, len);
      }
      if ( !PL_get_nchars(f, &len, &s, CVT_ATOM|REP_UTF8|BUF_MALLOC|CVT_EXCEPTION) )
        return FALSE;
      { int rc = out_iri(o, s, len);
        PL_free(s);
        return rc;
      }
    }
    case PL_INTEGER:
    { int64_t v;
      if ( PL_get_int64(f, &v) )
        return ( out_bytes(o, "\"", 1) && out_int(o, v) &&
                 out_bytes(o, "\"^^<http://www.w3.org/2001/XMLSchema#integer>", 45) );
      return out_value(o, f);                  /* big integers */
    }
    case PL_TERM:
    { term_t r = PL_new_term_ref();
      int rc = out_decimal(o, f, r);
      if ( rc < 0 )
        rc = out_lexical_form(o, f, r);
      PL_reset_term_refs(r);
      return rc >= 0 ? rc : out_value(o, f);
    }
    default:
      return out_value(o, f);
  }
}

/* The buffer of c_answer_text/2, kept from call to call (one per thread):
   a batch's text is megabytes, and memory freed to the system and asked
   for again is paid in page faults at each call. One larger than
   ANSWER_BUF_KEPT (a rare huge batch) is freed. */
#define ANSWER_BUF_KEPT ((size_t)64 << 20)
static __thread outbuf answer_buf;

/* A compound field (a decimal, a literal: the values whose text is dear,
   a rational's through GMP's text) equal to the same column's field of
   the row before has the same text, copied from there: rows come sorted
   within an instant, so a column often repeats (a join's earlier event
   in each of its answers). The first REUSE_COLUMNS columns are tracked. */
#define REUSE_COLUMNS 16

typedef struct
{ term_t  value;         /* the column's last compound field, or a variable */
  size_t  start;         /* where its text is in the buffer */
  size_t  len;
} column_text;

static int
out_column_field(outbuf *o, term_t f, column_text *c)
{ size_t start = o->len;

  if ( c && PL_is_compound(f) && PL_is_compound(c->value) && PL_compare(f, c->value) == 0 )
  { if ( !out_reserve(o, c->len) )
      return FALSE;
    memcpy(o->data + o->len, o->data + c->start, c->len);
    o->len += c->len;
    return TRUE;
  }
  if ( !out_field(o, f) )
    return FALSE;
  if ( c && PL_is_compound(f) )
  { c->start = start;
    c->len = o->len - start;
    return PL_put_term(c->value, f);
  }
  return TRUE;
}

/* c_answer_text(+Rows, -Text): Rows a list of r(Q, Start, End, Fields) */
static foreign_t
c_answer_text(term_t rows, term_t text)
{ outbuf o = answer_buf;
  term_t tail = PL_copy_term_ref(rows);
  term_t row = PL_new_term_ref();
  term_t arg = PL_new_term_ref();
  term_t fields = PL_new_term_ref();
  term_t field = PL_new_term_ref();
  term_t values = PL_new_term_refs(REUSE_COLUMNS);
  column_text columns[REUSE_COLUMNS];
  int rc = TRUE;

  for ( int i = 0; i < REUSE_COLUMNS; i++ )
    columns[i].value = values + i;
  while ( rc && PL_get_list(tail, row, tail) )
  { int column = 0;
    for ( int i = 1; rc && i <= 3; i++ )
    { int64_t v;
      rc = ( PL_get_arg(i, row, arg) && PL_get_int64_ex(arg, &v) &&
             (i == 1 || out_bytes(&o, "\t", 1)) && out_int(&o, v) );
    }
    if ( rc && !PL_get_arg(4, row, fields) )
      rc = PL_type_error("answer_row", row);
    while ( rc && PL_get_list(fields, field, fields) )
    { rc = out_bytes(&o, "\t", 1) &&
           out_column_field(&o, field, column < REUSE_COLUMNS ? &columns[column] : NULL);
      column++;
    }
    if ( rc )
      rc = out_bytes(&o, "\n", 1);
  }
  if ( rc && !PL_get_nil(tail) )
    rc = PL_type_error("list", tail);
  if ( rc )
    rc = PL_unify_chars(text, PL_STRING|(o.nonascii ? REP_UTF8 : REP_ISO_LATIN_1),
                        o.len, o.data ? o.data : "");
  else if ( !PL_exception(0) )
    rc = PL_resource_error("memory");
  if ( o.size > ANSWER_BUF_KEPT )
  { free(o.data);
    o.data = NULL;
    o.size = 0;
  }
  o.len = 0;
  o.nonascii = FALSE;
  answer_buf = o;
  return rc;
}

static foreign_t
c_band(term_t value, term_t band)
{ term_t v = PL_copy_term_ref(value);
  int64_t n, d, b;
  double f;

  while ( PL_is_functor(v, FUNCTOR_lv3) )      /* lv(Lexical, Datatype, Value) */
    _PL_get_arg(3, v, v);
  if ( PL_is_functor(v, FUNCTOR_dec1) )
  { _PL_get_arg(1, v, v);
    if ( !rational_parts(v, &n, &d) || !EXACT_IN_DOUBLE(n) || !EXACT_IN_DOUBLE(d) )
      return FALSE;
    f = (double)n / (double)d;
  } else if ( PL_is_integer(v) )
  { if ( !PL_get_int64(v, &n) || !EXACT_IN_DOUBLE(n) )
      return FALSE;
    f = (double)n;
  } else if ( !PL_is_float(v) || !PL_get_float(v, &f) )
    return FALSE;
  if ( isnan(f) )
    return PL_unify_atom_chars(band, "other");
  if ( f > 1.0e300 )                            /* as double_band/2 */
    b = 16000;
  else if ( f < -1.0e300 )
    b = -16001;
  else if ( f >= 0 )
    b = (int64_t)floor(log(1.0 + f) * 23.083120654223414);
  else
    b = -(int64_t)floor(log(1.0 - f) * 23.083120654223414) - 1;
  return PL_unify_int64(band, b);
}

static foreign_t
c_source(term_t digest)
{ return PL_unify_atom_chars(digest, CEP_FAST_SOURCE);
}

install_t
install_cep_fast(void)
{ FUNCTOR_e5 = PL_new_functor(PL_new_atom("e"), 5);
  FUNCTOR_sweep1 = PL_new_functor(PL_new_atom("sweep"), 1);
  FUNCTOR_end1 = PL_new_functor(PL_new_atom("end"), 1);
  FUNCTOR_dec1 = PL_new_functor(PL_new_atom("dec"), 1);
  FUNCTOR_lv3 = PL_new_functor(PL_new_atom("lv"), 3);
  PL_register_foreign("c_batch_item", 5, c_batch_item, PL_FA_NONDETERMINISTIC);
  PL_register_foreign("c_iri_plain", 1, c_iri_plain, 0);
  PL_register_foreign("c_answer_text", 2, c_answer_text, 0);
  PL_register_foreign("c_band", 2, c_band, 0);
  PL_register_foreign("c_source", 1, c_source, 0);
  PRED_cep_nt = PL_predicate("cep_nt", 2, "cep_values");
}
