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

    c_counted_item/5 is c_batch_item/5 with each item counted in the
    match room as it is given (see "The match room" below).

    c_iri_plain(+Atom) is true when the atom holds no character that an
    N-Triples IRIREF must escape, so it can be written between < and > as is.

    c_answer_text(+Rows, -Text) writes the answer lines of a batch;
    c_answers_text(+Answers, +Columns, :RowsOf, -Text) writes them from
    the answers themselves (distinct within an instant, projected), where
    their queries' fields are values picked, and from the rows RowsOf
    makes for the other instants.

    c_band(+Value, -Band) is the band of a number for the range index of
    a goal store (cep_values:cep_band/2, the same double arithmetic),
    where the number is an integer, a double or a decimal whose parts are
    exact in a double; it fails for any other value, which the Prolog
    version then takes.

    c_band_add/8, c_band_goal/10, c_band_expire/3, c_band_goals/2,
    c_band_count/2 and c_band_clear/1 keep the goals of the range-indexed
    SEQ stores (cep/compile/steps.py, Band) in C: see "Band stores" below;
    c_seq_add/7, c_seq_goal/8 and c_seq_goals/2 those of the plain SEQ
    stores, in the same structure with one bucket a key.

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

/* ------------------------------------------------------------------
   The match room (prolog/cep_fast.pl, cep_room_reset/1 and the rest):
   the partial matches the item being processed may still make (left),
   the limit (most), the events since the last instant's end, and the
   place of the event being processed among those of its instant. One
   call runs the rules at a time in a process (a thread); kept here, the
   count costs no Prolog call per event (as a global term it took a
   tenth of W1's time per event).
   ------------------------------------------------------------------ */

typedef struct
{ int64_t left, most;
  int64_t events;          /* since the last instant's end */
  int     has_instant;
  int64_t instant;         /* the end of the event being processed */
  int64_t place;           /* its place among its instant's events */
} match_room;

static __thread match_room room;

static void
room_event(int64_t te)
{ room.left = room.most;
  room.events++;
  if ( room.has_instant && room.instant == te )
    room.place++;
  else
  { room.has_instant = TRUE;
    room.instant = te;
    room.place = 1;
  }
}

static void
room_end(void)
{ if ( __builtin_mul_overflow(room.most, room.events > 1 ? room.events : 1, &room.left) )
    room.left = INT64_MAX;
  room.events = 0;
  room.place = 0;
}

static void
room_sweep(void)
{ room.left = room.most;
}

static foreign_t
c_room_reset(term_t most)
{ int64_t m;

  if ( !PL_get_int64_ex(most, &m) )
    return FALSE;
  memset(&room, 0, sizeof(room));
  room.left = room.most = m;
  return TRUE;
}

/* c_room_item(+Item): count an item that no batch gave (an instant's end
   or a sweep the runtime makes) */
static foreign_t
c_room_item(term_t item)
{ term_t a = PL_new_term_ref();
  int64_t te;

  if ( PL_is_functor(item, FUNCTOR_e5) )
  { _PL_get_arg(5, item, a);
    if ( !PL_get_int64_ex(a, &te) )
      return FALSE;
    room_event(te);
  } else if ( PL_is_functor(item, FUNCTOR_end1) )
    room_end();
  else
    room_sweep();
  return TRUE;
}

/* c_room_take(+Weight) is semidet: take Weight from the room left, or
   fail where less is left */
static foreign_t
c_room_take(term_t weight)
{ int64_t w;

  if ( !PL_get_int64_ex(weight, &w) )
    return FALSE;
  if ( room.left < w )
    return FALSE;
  room.left -= w;
  return TRUE;
}

static foreign_t
c_room_most(term_t most)
{ return PL_unify_int64(most, room.most);
}

static foreign_t
c_room_place(term_t place)
{ return PL_unify_int64(place, room.place);
}

/* The atom of a line's IRI field as the last line had it: a batch's
   predicates (and often its subjects) repeat from line to line, and
   comparing the text costs less than looking the atom up by it. The
   atom is registered while it is kept (no item may hold it any more). */
typedef struct
{ const char *text;      /* the field, in the batch's copy of the text */
  size_t      len;
  atom_t      atom;      /* 0: none yet */
} last_iri;

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
  int     counted;       /* each item is counted in the match room */
  last_iri last[2];      /* of the subject and the predicate */
} batch;

static void
free_batch(batch *b)
{ for ( int i = 0; i < 2; i++ )
  { if ( b->last[i].atom )
      PL_unregister_atom(b->last[i].atom);
  }
  PL_free(b->text);
  free(b);
}

/* put_field() of the subject (i = 0) or the predicate (i = 1) of a line,
   the atom of an IRI the same line's field had before taken as it is */
static int
put_repeated_field(batch *b, int i, term_t t, const char *s, size_t len)
{ last_iri *last = &b->last[i];
  atom_t a;

  if ( len == 0 || s[0] != 'I' )
    return put_field(t, s, len, b->rep);
  if ( last->atom && last->len == len && memcmp(last->text, s, len) == 0 )
    return PL_put_atom(t, last->atom);
  if ( !PL_put_chars(t, PL_ATOM|b->rep, len - 1, s + 1) )
    return FALSE;
  if ( PL_get_atom(t, &a) )
  { PL_register_atom(a);
    if ( last->atom )
      PL_unregister_atom(last->atom);
    last->atom = a;
    last->text = s;
    last->len = len;
  }
  return TRUE;
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
batch_item(term_t text, term_t next, term_t period, term_t ends, term_t item,
           int counted, control_t h)
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
      b->counted = counted;
      memset(b->last, 0, sizeof(b->last));
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
    { rc = unify_item1(item, FUNCTOR_end1, b->group_end);
      if ( rc && b->counted )
        room_end();
    }
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
      if ( b->counted )
        room_end();
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
      if ( b->counted )
        room_sweep();
      PL_retry_address(b);
    }
  }
  args = PL_new_term_refs(5);
  t = PL_new_term_ref();
  if ( !put_repeated_field(b, 0, args + 0, field[0], flen[0]) ||
       !put_repeated_field(b, 1, args + 1, field[1], flen[1]) ||
       !put_field(args + 2, field[2], flen[2], b->rep) ||
       !PL_put_int64(args + 3, ts) || !PL_put_int64(args + 4, te) ||
       !PL_cons_functor_v(t, FUNCTOR_e5, args) ||
       !PL_unify(item, t) )
  { free_batch(b);
    return FALSE;
  }
  if ( b->counted )
    room_event(te);
  PL_retry_address(b);
}

static foreign_t
c_batch_item(term_t text, term_t next, term_t period, term_t ends, term_t item,
             control_t h)
{ return batch_item(text, next, period, ends, item, FALSE, h);
}

static foreign_t
c_counted_item(term_t text, term_t next, term_t period, term_t ends, term_t item,
               control_t h)
{ return batch_item(text, next, period, ends, item, TRUE, h);
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

/* The buffer of the answer writers, kept from call to call (one per
   thread): a batch's text is megabytes, and memory freed to the system
   and asked for again is paid in page faults at each call. One larger
   than ANSWER_BUF_KEPT (a rare huge batch) is freed. */
#define ANSWER_BUF_KEPT ((size_t)64 << 20)
static __thread outbuf answer_buf;

/* A compound field (a decimal, a literal: the values whose text is dear)
   equal to the same column's field of the row before has the same text,
   copied from there: rows come sorted within an instant, so a column
   often repeats (a join's earlier event in each of its answers). The
   first REUSE_COLUMNS columns are tracked. */
#define REUSE_COLUMNS 16

typedef struct
{ term_t  value;         /* the column's last compound field, or a variable */
  size_t  start;         /* where its text is in the buffer */
  size_t  len;
  int     has_double;    /* it is a decimal dec(Rational) of double dec */
  double  dec;
} column_text;

/* The IRIs and decimals met before in the same call, whatever their
   column or row, have their text copied from where it was first written:
   answers repeat values (a company in each of its answers, a price in
   each answer its event joins). An IRI is known by its atom; a decimal
   dec(R), R a rational, by its value: SWI-Prolog gives a rational's parts
   only as text, at about 0.4 us a value, while R's nearest double (30 ns)
   finds the decimals that may be equal and comparing R with each (40 ns)
   tells. The table is kept from call to call, the entries of a call told
   by the call's number. A call notes at most SEEN_MOST values, and
   SEEN_DECIMALS decimals (it holds a term reference to each). */
#define SEEN_MOST ((size_t)1 << 18)
#define SEEN_DECIMALS 16384

typedef struct
{ uint64_t call;         /* the call that noted it; another: a free slot */
  uint64_t key;          /* the atom, or the bits of the decimal's double */
  term_t   value;        /* a decimal's rational; 0 for an IRI */
  size_t   start, len;   /* its text in the buffer */
} seen_text;

typedef struct
{ seen_text *slots;
  size_t     size;       /* a power of two, or 0 */
  size_t     count;      /* the call's */
  uint64_t   call;
} seen_table;

static __thread seen_table answer_seen;

static size_t
seen_hash(uint64_t key)
{ key ^= key >> 33;                             /* splitmix64's finisher */
  key *= UINT64_C(0xff51afd7ed558ccd);
  key ^= key >> 33;
  key *= UINT64_C(0xc4ceb9fe1a85ec53);
  key ^= key >> 33;
  return (size_t)key;
}

/* The call's entry of key (value: the decimal's rational, 0 for an
   atom), or the free slot where it goes */
static seen_text *
seen_slot(seen_table *t, uint64_t key, term_t value)
{ size_t mask = t->size - 1;

  for ( size_t i = seen_hash(key) & mask; ; i = (i + 1) & mask )
  { seen_text *e = &t->slots[i];
    if ( e->call != t->call )
      return e;
    if ( e->key == key && (value ? e->value && PL_compare(e->value, value) == 0 : !e->value) )
      return e;
  }
}

/* Room for one more entry (at most half the slots used); FALSE when the
   call has noted its most, or memory is short: then it notes no more */
static int
seen_room(seen_table *t)
{ if ( t->count >= SEEN_MOST )
    return FALSE;
  if ( 2 * (t->count + 1) > t->size )
  { size_t size = t->size ? 2 * t->size : 1 << 12;
    seen_text *slots = calloc(size, sizeof(*slots)), *old = t->slots;
    if ( !slots )
      return FALSE;
    for ( size_t i = 0; i < t->size; i++ )     /* the call's entries, each in the first */
    { if ( old[i].call == t->call )            /* free slot of its chain */
      { size_t j = seen_hash(old[i].key) & (size - 1);
        while ( slots[j].call == t->call )
          j = (j + 1) & (size - 1);
        slots[j] = old[i];
      }
    }
    free(old);
    t->slots = slots;
    t->size = size;
  }
  return TRUE;
}

/* The writer of one call's answer lines */
typedef struct
{ outbuf       o;
  seen_table  *seen;
  column_text  columns[REUSE_COLUMNS];
  term_t       decimals;       /* SEEN_DECIMALS references, for the decimals noted */
  size_t       decimals_used;
  term_t       arg;            /* a scratch reference */
  int          column;         /* of the next field */
} answer_writer;

static int
writer_open(answer_writer *w)
{ term_t values = PL_new_term_refs(REUSE_COLUMNS);

  w->o = answer_buf;
  w->seen = &answer_seen;
  w->seen->call++;
  w->seen->count = 0;
  w->decimals_used = 0;
  w->column = 0;
  if ( !values || !(w->decimals = PL_new_term_refs(SEEN_DECIMALS)) || !(w->arg = PL_new_term_ref()) )
    return FALSE;
  for ( int i = 0; i < REUSE_COLUMNS; i++ )
  { w->columns[i].value = values + i;
    w->columns[i].has_double = FALSE;
  }
  return TRUE;
}

/* Q TAB Start TAB End, a line's beginning */
static int
writer_row(answer_writer *w, int64_t q, int64_t ts, int64_t te)
{ w->column = 0;
  return ( out_int(&w->o, q) && out_bytes(&w->o, "\t", 1) && out_int(&w->o, ts) &&
           out_bytes(&w->o, "\t", 1) && out_int(&w->o, te) );
}

/* Copies f's text where an IRI or a decimal was written before in the
   call (TRUE; -1: no memory), else FALSE with the key to note it by and
   whether it is a decimal (-1: neither). dec: where f is known to be
   dec(Rational), the rational's double (else NULL) */
static int
seen_before(answer_writer *w, term_t f, const double *dec, uint64_t *key, int *decimal)
{ seen_table *t = w->seen;
  outbuf *o = &w->o;
  atom_t a;
  double d;
  seen_text *e;

  if ( dec ? (d = *dec, PL_get_arg(1, f, w->arg)) : FALSE )
  { memcpy(key, &d, sizeof(d));
    *decimal = TRUE;
    if ( !t->size || (e = seen_slot(t, *key, w->arg))->call != t->call )
      return FALSE;
  } else if ( PL_get_atom(f, &a) )
  { *key = (uint64_t)a;
    *decimal = FALSE;
    if ( !t->size || (e = seen_slot(t, *key, 0))->call != t->call )
      return FALSE;
  } else if ( PL_is_functor(f, FUNCTOR_dec1) && PL_get_arg(1, f, w->arg) &&
              PL_is_rational(w->arg) && !PL_is_integer(w->arg) && PL_get_float(w->arg, &d) )
  { memcpy(key, &d, sizeof(d));
    *decimal = TRUE;
    if ( !t->size || (e = seen_slot(t, *key, w->arg))->call != t->call )
      return FALSE;
  } else
  { *decimal = -1;
    return FALSE;
  }
  if ( !out_reserve(o, e->len) )
    return -1;
  memcpy(o->data + o->len, o->data + e->start, e->len);
  o->len += e->len;
  return TRUE;
}

/* TAB and the text of the field f; dec: where f is known to be
   dec(Rational), the rational's double (else NULL), which tells most
   unequal decimals apart without comparing the rationals */
static int
writer_field(answer_writer *w, term_t f, const double *dec)
{ outbuf *o = &w->o;
  column_text *c = w->column < REUSE_COLUMNS ? &w->columns[w->column] : NULL;
  size_t start;
  uint64_t key;
  int decimal, rc;

  w->column++;
  if ( !out_bytes(o, "\t", 1) )
    return FALSE;
  start = o->len;
  if ( c && (!dec || !c->has_double || c->dec == *dec) &&
       PL_is_compound(f) && PL_is_compound(c->value) && PL_compare(f, c->value) == 0 )
  { if ( !out_reserve(o, c->len) )
      return FALSE;
    memcpy(o->data + o->len, o->data + c->start, c->len);
    o->len += c->len;
    return TRUE;
  }
  if ( (rc = seen_before(w, f, dec, &key, &decimal)) )
    return rc > 0;
  if ( !out_field(o, f) )
    return FALSE;
  if ( decimal >= 0 && (!decimal || w->decimals_used < SEEN_DECIMALS) && seen_room(w->seen) )
  { term_t value = 0;
    seen_text *e;
    if ( decimal && !PL_get_arg(1, f, (value = w->decimals + w->decimals_used++)) )
      return FALSE;
    e = seen_slot(w->seen, key, value);
    e->call = w->seen->call;
    e->key = key;
    e->value = value;
    e->start = start;
    e->len = o->len - start;
    w->seen->count++;
  }
  if ( c && PL_is_compound(f) )
  { c->start = start;
    c->len = o->len - start;
    c->has_double = (dec != NULL);
    if ( dec )
      c->dec = *dec;
    return PL_put_term(c->value, f);
  }
  return TRUE;
}

/* TAB, an unbound field */
static int
writer_unbound(answer_writer *w)
{ w->column++;
  return out_bytes(&w->o, "\t", 1);
}

/* Text the lines written (rc: whether all went well), and the buffer
   kept for the next call */
static int
writer_close(answer_writer *w, term_t text, int rc)
{ outbuf o = w->o;

  if ( rc )
    rc = PL_unify_chars(text, PL_STRING|(o.nonascii ? REP_UTF8 : REP_ISO_LATIN_1),
                        o.len, o.data ? o.data : "");
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

/* The lines of Rows, a list of r(Q, Start, End, Fields) */
static int
write_rows(answer_writer *w, term_t rows)
{ term_t tail = PL_copy_term_ref(rows);
  term_t row = PL_new_term_ref();
  term_t arg = PL_new_term_ref();
  term_t fields = PL_new_term_ref();
  term_t field = PL_new_term_ref();
  int rc = TRUE;

  while ( rc && PL_get_list(tail, row, tail) )
  { int64_t v[3];
    for ( int i = 0; rc && i < 3; i++ )
      rc = PL_get_arg(i + 1, row, arg) && PL_get_int64_ex(arg, &v[i]);
    rc = rc && writer_row(w, v[0], v[1], v[2]);
    if ( rc && !PL_get_arg(4, row, fields) )
      rc = PL_type_error("answer_row", row);
    while ( rc && PL_get_list(fields, field, fields) )
      rc = writer_field(w, field, NULL);
    if ( rc )
      rc = out_bytes(&w->o, "\n", 1);
  }
  if ( rc && !PL_get_nil(tail) )
    rc = PL_type_error("list", tail);
  PL_reset_term_refs(tail);
  return rc;
}

/* c_answer_text(+Rows, -Text): Rows a list of r(Q, Start, End, Fields) */
static foreign_t
c_answer_text(term_t rows, term_t text)
{ answer_writer w;
  int rc = writer_open(&w) && write_rows(&w, rows);

  if ( !rc && !PL_exception(0) )
    PL_resource_error("memory");
  return writer_close(&w, text, rc);
}

/* ------------------------------------------------------------------
   c_answers_text(+Answers, +Columns, :RowsOf, -Text): the answer lines
   of a batch's answers ans(Q, Values, Start, End), in the order they
   were found (those of an instant, with the same End, next to each
   other), as cep_runtime makes them in Prolog (answer_rows/4, then
   c_answer_text/2), in one pass and with no list of rows: where an
   instant has more than one answer, they are made distinct and put in
   the standard order of terms (unbound variables compared as
   numbervars/3 numbers them: cep_runtime:distinct_terms/2), and each
   answer is projected by its query's Columns. Columns is a list of
   Q-(Name/Arity-Indexes): Values is Name/Arity, and Indexes gives the
   argument of Values of each field (0: unbound). An instant with an
   answer not of that kind (a query not in Columns, a value that is a
   compound term with a variable inside, a Start that is not an integer)
   has its rows made by call(RowsOf, InstantAnswers, Rows), the rows
   r(Q, Start, End, Fields) of c_answer_text/2, and the other instants
   are still written here: a rule set that mixes such queries with plain
   ones does no instant twice. Fails, with nothing written, where an
   answer is not ans/4 with an integer End.

   The order is the standard order's, computed from a key of each answer
   taken once: its Q, Start and End, and for each value its kind and an
   integer (an integer, dec(Integer), a variable's number), an atom, or
   a double (dec(Rational): doubles in order are rationals in the same
   order, as rounding to a double never reverses two numbers). Where the
   keys do not tell (two doubles equal, two atoms, values of different
   kinds or of others), PL_compare() compares the values themselves.
   ------------------------------------------------------------------ */

enum { KEY_INT, KEY_DEC_INT, KEY_VAR, KEY_ATOM, KEY_DEC_RATIONAL, KEY_OTHER };

typedef struct
{ int kind;
  union
  { int64_t i;           /* KEY_INT, KEY_DEC_INT, KEY_VAR (its number) */
    double  d;           /* KEY_DEC_RATIONAL */
    atom_t  a;           /* KEY_ATOM */
  } v;
} value_key;

typedef struct
{ term_t   answer;
  int64_t  q, ts, te;
  atom_t   name;         /* of Values */
  size_t   arity;
  size_t   keys;         /* its first value key in the pool */
} answer_key;

typedef struct
{ answer_key *answers;
  size_t      count, size;
  value_key  *keys;
  size_t      key_count, key_size;
  size_t     *order, *spare;   /* answers' indexes, sorted; merge sort's */
  size_t      order_size, spare_size;
  term_t      t1, t2, tmp;     /* scratch references */
} instant;

static __thread instant answer_instant;
static functor_t FUNCTOR_ans4, FUNCTOR_var1;

/* Room for `need` items of `item` bytes in *array, of *size items: the
   size doubled from `first` as needed */
static int
room_for(void **array, size_t *size, size_t need, size_t item, size_t first)
{ if ( need > *size )
  { size_t size2 = *size ? *size : first;
    void *p;
    while ( size2 < need )
      size2 *= 2;
    if ( !(p = realloc(*array, size2 * item)) )
      return FALSE;
    *array = p;
    *size = size2;
  }
  return TRUE;
}

/* The value i (0-based) of an answer as numbervars/3 would leave it: a
   variable as '$VAR'(N) */
static int
key_value(instant *in, const answer_key *a, size_t i, term_t t)
{ if ( in->keys[a->keys + i].kind == KEY_VAR )
    return ( PL_put_int64(in->tmp, in->keys[a->keys + i].v.i) &&
             PL_cons_functor_v(t, FUNCTOR_var1, in->tmp) );
  return PL_get_arg(2, a->answer, t) && PL_get_arg(i + 1, t, t);
}

static int
compare_int64(int64_t x, int64_t y)
{ return x < y ? -1 : x > y ? 1 : 0;
}

static int
compare_answers(instant *in, const answer_key *a, const answer_key *b)
{ int c;

  if ( (c = compare_int64(a->q, b->q)) )
    return c;
  if ( a->name != b->name || a->arity != b->arity )
  { if ( !PL_get_arg(2, a->answer, in->t1) || !PL_get_arg(2, b->answer, in->t2) )
      return 0;
    if ( (c = PL_compare(in->t1, in->t2)) )
      return c;
  } else
  { for ( size_t i = 0; i < a->arity; i++ )
    { const value_key *x = &in->keys[a->keys + i], *y = &in->keys[b->keys + i];
      if ( x->kind == y->kind )
      { switch ( x->kind )
        { case KEY_INT:
          case KEY_DEC_INT:
          case KEY_VAR:
            if ( (c = compare_int64(x->v.i, y->v.i)) )
              return c;
            continue;
          case KEY_ATOM:
            if ( x->v.a == y->v.a )
              continue;
            break;
          case KEY_DEC_RATIONAL:
            if ( x->v.d != y->v.d )
              return x->v.d < y->v.d ? -1 : 1;
            break;
        }
      }
      if ( key_value(in, a, i, in->t1) && key_value(in, b, i, in->t2) &&
           (c = PL_compare(in->t1, in->t2)) )
        return c;
    }
  }
  if ( (c = compare_int64(a->ts, b->ts)) )
    return c;
  return compare_int64(a->te, b->te);
}

/* The key of the answer in the term reference t: FALSE where it is not
   of the kind c_answers_text/4 takes */
static int
answer_key_of(instant *in, term_t t, answer_key *a)
{ term_t v = in->tmp;
  size_t vars = 0;

  if ( !PL_is_functor(t, FUNCTOR_ans4) ||
       !PL_get_arg(1, t, v) || !PL_get_int64(v, &a->q) ||
       !PL_get_arg(3, t, v) || !PL_get_int64(v, &a->ts) ||
       !PL_get_arg(4, t, v) || !PL_get_int64(v, &a->te) ||
       !PL_get_arg(2, t, v) || !PL_get_name_arity(v, &a->name, &a->arity) )
    return FALSE;
  a->answer = t;
  a->keys = in->key_count;
  if ( !room_for((void **)&in->keys, &in->key_size, in->key_count + a->arity, sizeof(value_key), 256) )
    return FALSE;
  for ( size_t i = 0; i < a->arity; i++ )
  { value_key *k = &in->keys[in->key_count + i];
    term_t x = in->t1;
    if ( !PL_get_arg(i + 1, v, x) )
      return FALSE;
    switch ( PL_term_type(x) )
    { case PL_VARIABLE:                         /* its number: that of its first */
      { k->kind = KEY_VAR;                      /* occurrence, or the next */
        k->v.i = (int64_t)vars;
        for ( size_t j = 0; j < i; j++ )
        { if ( in->keys[in->key_count + j].kind == KEY_VAR &&
               PL_get_arg(j + 1, v, in->t2) && PL_compare(x, in->t2) == 0 )
          { k->v.i = in->keys[in->key_count + j].v.i;
            break;
          }
        }
        if ( k->v.i == (int64_t)vars )
          vars++;
        break;
      }
      case PL_INTEGER:
        k->kind = PL_get_int64(x, &k->v.i) ? KEY_INT : KEY_OTHER;
        break;
      case PL_ATOM:
        k->kind = KEY_ATOM;
        if ( !PL_get_atom(x, &k->v.a) )
          return FALSE;
        break;
      case PL_TERM:
        k->kind = KEY_OTHER;
        if ( PL_is_functor(x, FUNCTOR_dec1) && PL_get_arg(1, x, in->t2) )
        { if ( PL_is_integer(in->t2) )
          { if ( PL_get_int64(in->t2, &k->v.i) )
              k->kind = KEY_DEC_INT;
          } else if ( PL_is_rational(in->t2) && PL_get_float(in->t2, &k->v.d) )
            k->kind = KEY_DEC_RATIONAL;
        }
        if ( k->kind == KEY_OTHER && !PL_is_ground(x) )
          return FALSE;
        break;
      default:
        k->kind = KEY_OTHER;
        if ( !PL_is_ground(x) )
          return FALSE;
    }
  }
  in->key_count += a->arity;
  return TRUE;
}

/* Sorts the instant's answers (stable merge sort of their indexes) */
static void
sort_answers(instant *in, size_t n)
{ size_t *from = in->order, *to = in->spare;

  for ( size_t width = 1; width < n; width *= 2 )
  { for ( size_t lo = 0; lo < n; lo += 2 * width )
    { size_t mid = lo + width < n ? lo + width : n;
      size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      while ( i < mid && j < hi )
        to[k++] = compare_answers(in, &in->answers[from[j]], &in->answers[from[i]]) < 0 ? from[j++] : from[i++];
      while ( i < mid )
        to[k++] = from[i++];
      while ( j < hi )
        to[k++] = from[j++];
    }
    size_t *swap = from;
    from = to;
    to = swap;
  }
  if ( from != in->order )
    memcpy(in->order, from, n * sizeof(size_t));
}

/* The columns of query q: Name/Arity-Indexes in Columns (FALSE: none) */
typedef struct
{ atom_t  name;
  size_t  arity;
  size_t  first, count;  /* its indexes in the pool */
} query_columns;

static __thread query_columns *answer_queries;
static __thread size_t answer_query_size;
static __thread int *answer_indexes;
static __thread size_t answer_index_size;

/* Columns (a list of Q-(Name/Arity-Indexes)) read into answer_queries,
   indexed by Q (arity (size_t)-1: no columns); *queries their number */
static int
read_columns(term_t columns, size_t *queries)
{ term_t tail = PL_copy_term_ref(columns), head = PL_new_term_ref();
  term_t a = PL_new_term_ref(), b = PL_new_term_ref(), c = PL_new_term_ref();
  size_t indexes = 0;

  *queries = 0;
  while ( PL_get_list(tail, head, tail) )
  { int q, arity, index;
    atom_t name;
    size_t count = 0;
    if ( !PL_get_arg(1, head, a) || !PL_get_integer(a, &q) || q < 0 || q > 1 << 20 ||
         !PL_get_arg(2, head, a) || !PL_get_arg(1, a, b) || !PL_get_arg(2, a, c) ||
         !PL_get_arg(1, b, a) || !PL_get_atom(a, &name) ||
         !PL_get_arg(2, b, a) || !PL_get_integer(a, &arity) || arity < 0 ||
         !room_for((void **)&answer_queries, &answer_query_size, (size_t)q + 1, sizeof(query_columns), 256) )
      return FALSE;
    for ( size_t i = *queries; i <= (size_t)q; i++ )
      answer_queries[i].arity = (size_t)-1;
    if ( (size_t)q + 1 > *queries )
      *queries = (size_t)q + 1;
    while ( PL_get_list(c, a, c) )
    { if ( !PL_get_integer(a, &index) || index < 0 || index > arity ||
           !room_for((void **)&answer_indexes, &answer_index_size, indexes + count + 1, sizeof(int), 256) )
        return FALSE;
      answer_indexes[indexes + count++] = index;
    }
    answer_queries[q] = (query_columns){ name, (size_t)arity, indexes, count };
    indexes += count;
  }
  return PL_get_nil(tail);
}

/* Whether the answer's Values are of its query's Columns' Name/Arity */
static int
answer_fits(const answer_key *a, size_t queries)
{ const query_columns *qc;

  return ( a->q >= 0 && (size_t)a->q < queries && (qc = &answer_queries[a->q])->arity == a->arity &&
           qc->name == a->name );
}

/* The line of an answer, projected by its query's columns */
static int
write_answer(answer_writer *w, const instant *in, const answer_key *a, term_t values, term_t field)
{ const query_columns *qc = &answer_queries[a->q];

  if ( !PL_get_arg(2, a->answer, values) || !writer_row(w, a->q, a->ts, a->te) )
    return FALSE;
  for ( size_t i = 0; i < qc->count; i++ )
  { int index = answer_indexes[qc->first + i];
    const value_key *k = index ? &in->keys[a->keys + index - 1] : NULL;
    if ( !(index == 0 ? writer_unbound(w)
                      : PL_get_arg(index, values, field) &&
                        writer_field(w, field, k->kind == KEY_DEC_RATIONAL ? &k->v.d : NULL)) )
      return FALSE;
  }
  return out_bytes(&w->o, "\n", 1);
}

/* The lines of an instant's n answers (the term references from first
   on) that the columns do not take: the rows call(RowsOf, Answers, Rows)
   makes of them */
static int
write_other_instant(answer_writer *w, term_t rows_of, term_t first, size_t n)
{ static predicate_t call3;
  term_t args = PL_new_term_refs(3);
  int rc;

  if ( !call3 )
    call3 = PL_predicate("call", 3, "system");
  rc = PL_put_term(args, rows_of) && PL_put_nil(args + 1);
  for ( size_t i = n; rc && i-- > 0; )
    rc = PL_cons_list(args + 1, first + i, args + 1);
  rc = ( rc && PL_call_predicate(NULL, PL_Q_PASS_EXCEPTION, call3, args) &&
         write_rows(w, args + 2) );
  PL_reset_term_refs(args);
  return rc;
}

/* The End of an answer ans(Q, Values, Start, End) */
static int
answer_end(term_t t, term_t tmp, int64_t *te)
{ return PL_is_functor(t, FUNCTOR_ans4) && PL_get_arg(4, t, tmp) && PL_get_int64(tmp, te);
}

static foreign_t
c_answers_text(term_t answers, term_t columns, term_t rows_of, term_t text)
{ answer_writer w;
  instant *in = &answer_instant;
  term_t tail, values, field, rest;
  size_t queries;
  int rc;

  if ( !read_columns(columns, &queries) )
    return FALSE;
  tail = PL_copy_term_ref(answers);
  values = PL_new_term_ref();
  field = PL_new_term_ref();
  in->t1 = PL_new_term_ref();
  in->t2 = PL_new_term_ref();
  in->tmp = PL_new_term_ref();
  rest = PL_new_term_ref();
  rc = writer_open(&w);
  while ( rc && !PL_get_nil(tail) )
  { term_t first = PL_new_term_ref();           /* the instant's answers, each a reference */
    size_t n = 0;
    int64_t te0 = 0, te;
    int taken = TRUE;                           /* every answer of the instant so far fits */
    in->key_count = 0;
    for (;;)                                    /* the answers with the first's End */
    { term_t t = n ? PL_new_term_ref() : first;
      if ( !PL_put_term(rest, tail) || !PL_get_list(tail, t, tail) )
        break;
      if ( !(rc = answer_end(t, in->tmp, &te)) )
        break;
      if ( n > 0 && te != te0 )                 /* the next instant's: left for it */
      { rc = PL_put_term(tail, rest);
        break;
      }
      te0 = te;
      if ( taken )
      { answer_key *a;
        if ( !(rc = room_for((void **)&in->answers, &in->size, n + 1, sizeof(answer_key), 256)) )
          break;
        a = &in->answers[n];
        taken = answer_key_of(in, t, a) && answer_fits(a, queries);
      }
      n++;
    }
    if ( rc && n == 0 )                         /* not a list */
      rc = FALSE;
    if ( rc && !taken )
      rc = write_other_instant(&w, rows_of, first, n);
    else if ( rc )
    { if ( n > 1 )
      { rc = ( room_for((void **)&in->order, &in->order_size, n, sizeof(size_t), 256) &&
               room_for((void **)&in->spare, &in->spare_size, n, sizeof(size_t), 256) );
        if ( rc )
        { for ( size_t i = 0; i < n; i++ )
            in->order[i] = i;
          sort_answers(in, n);
        }
      }
      for ( size_t i = 0; rc && i < n; i++ )
      { const answer_key *a = &in->answers[n > 1 ? in->order[i] : i];
        if ( i > 0 && compare_answers(in, &in->answers[in->order[i - 1]], a) == 0 )
          continue;                             /* a repeat: one solution (paper 4.2) */
        rc = write_answer(&w, in, a, values, field);
      }
    }
    PL_reset_term_refs(first);
  }
  if ( PL_exception(0) )
    rc = FALSE;
  return writer_close(&w, text, rc);
}

/* The band of a double (cep_values_compare:double_band/2) */
static int64_t
double_band(double f)
{ if ( f > 1.0e300 )
    return 16000;
  if ( f < -1.0e300 )
    return -16001;
  if ( f >= 0 )
    return (int64_t)floor(log(1.0 + f) * 23.083120654223414);
  return -(int64_t)floor(log(1.0 - f) * 23.083120654223414) - 1;
}

static foreign_t
c_band(term_t value, term_t band)
{ term_t v = PL_copy_term_ref(value);
  int64_t n, d;
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
  return PL_unify_int64(band, double_band(f));
}

/* ------------------------------------------------------------------
   Band stores: the goals of a range-indexed SEQ goal store (cep/compile/
   steps.py, Band), kept here instead of as dynamic facts. A store is
   named by its rule set's module and its name; it maps a join key (an
   atom or an integer) to its bands, in the order they were first used,
   and each band to its goals, in the order they came: a goal is its
   values (a record), its interval, its generation and, where C can
   compare it, its ordered value (the values' last argument: see num_t).
   A right solution visits the goals of the bands its value admits and
   gives those that pass the band check; a sweep drops whole
   generations, and the bands and keys left empty, with no Prolog work
   per goal (as dynamic facts, each dropped goal left three clause
   indexes). prolog/cep_fast.pl has the same store in dynamic facts, for
   where this library is not built; both give the same goals in the
   same order.
   ------------------------------------------------------------------ */

/* A value as the band check compares it: NUM_INT an integer of 64 bits,
   NUM_DEC a decimal dec(N) of an integer of 64 bits, NUM_RAT a decimal
   dec(R), R a rational that is not an integer, known by its double
   float(R) (SWI-Prolog gives a rational's parts only as text, at about
   0.4 us a value; its double costs a tenth of that), NUM_DBL a double;
   NUM_UNBOUND an unbound value (an error: it passes no check);
   NUM_OTHER any other value, which cep_values_compare:cep_compare/4
   compares. An lv(Lexical, Datatype, Value) is its Value, as
   value_class/3 takes it. */
enum { NUM_UNBOUND, NUM_OTHER, NUM_INT, NUM_DEC, NUM_RAT, NUM_DBL };

typedef struct
{ int     kind;
  int64_t n;               /* NUM_INT and NUM_DEC */
  double  f;               /* NUM_DBL, NUM_RAT */
} num_t;

typedef struct
{ int64_t  gen;
  int64_t  ts, te;
  num_t    value;
  record_t values;
} band_goal;

typedef struct
{ int        other;        /* the band `other` (a value with no order) */
  int64_t    band;
  int64_t    max_te;       /* no goal ends later: a goal that does is new */
  size_t     last_from;    /* the goals from here on, and no other, end at max_te */
  band_goal *goals;
  size_t     count, size;
} band_bucket;

typedef struct band_key
{ struct band_key *next;   /* in its hash chain */
  int           is_atom;
  int64_t       key;       /* an integer, or an atom_t (registered) */
  band_bucket **bands;
  size_t        count, size;
  size_t        last;      /* the band last added to, tried first */
} band_key;

typedef struct band_store
{ struct band_store *next;
  atom_t     module, name, bands_name;   /* registered; a plain store's bands_name is its name */
  int        plain;                      /* a plain SEQ store: one bucket a key, no band check */
  band_key **table;
  size_t     buckets, keys;
  size_t     goals;
} band_store;

static band_store *band_stores;
static functor_t FUNCTOR_band_goals5, FUNCTOR_g4;
static atom_t ATOM_other, ATOM_lt, ATOM_le, ATOM_gt, ATOM_ge, ATOM_true;
static predicate_t PRED_variant, PRED_cep_band, PRED_cep_compare;

static int get_band(term_t t, int *other, int64_t *band);

static void
get_num(term_t value, num_t *x)
{ term_t v = PL_copy_term_ref(value);

  while ( PL_is_functor(v, FUNCTOR_lv3) )
    _PL_get_arg(3, v, v);
  if ( PL_is_variable(v) )
    x->kind = NUM_UNBOUND;
  else if ( PL_is_functor(v, FUNCTOR_dec1) )
  { _PL_get_arg(1, v, v);
    if ( PL_is_integer(v) )
      x->kind = PL_get_int64(v, &x->n) ? NUM_DEC : NUM_OTHER;
    else
      x->kind = PL_is_rational(v) && PL_get_float(v, &x->f) ? NUM_RAT : NUM_OTHER;
  } else if ( PL_is_integer(v) )
    x->kind = PL_get_int64(v, &x->n) ? NUM_INT : NUM_OTHER;
  else if ( PL_is_float(v) && PL_get_float(v, &x->f) )
    x->kind = NUM_DBL;
  else
    x->kind = NUM_OTHER;
}

/* The band of a value (cep_values_compare:cep_band/2): here where the
   value is a double or exact in one, else by cep_band/2 */
static int
num_band(const num_t *x, term_t value, int *other, int64_t *band)
{ double f;

  *other = FALSE;
  switch ( x->kind )
  { case NUM_UNBOUND:
      *other = TRUE;
      *band = 0;
      return TRUE;
    case NUM_INT:
    case NUM_DEC:
      if ( EXACT_IN_DOUBLE(x->n) )
      { f = (double)x->n;
        goto found;
      }
      break;
    case NUM_RAT:                                /* float(R), as cep_band/2 takes it */
    case NUM_DBL:
      f = x->f;
      goto found;
  }
  { term_t args = PL_new_term_refs(2);
    int rc = ( PL_put_term(args, value) &&
               PL_call_predicate(NULL, PL_Q_PASS_EXCEPTION, PRED_cep_band, args) &&
               get_band(args + 1, other, band) );
    PL_reset_term_refs(args);
    return rc;
  }
found:
  if ( isnan(f) )
  { *other = TRUE;
    *band = 0;
  } else
    *band = double_band(f);
  return TRUE;
}

/* The double of an integer or a decimal, where it is exact or float(R) */
static int
exact_double(const num_t *x, double *f)
{ switch ( x->kind )
  { case NUM_INT:
    case NUM_DEC:
      *f = (double)x->n;
      return EXACT_IN_DOUBLE(x->n);
    case NUM_RAT:
      *f = x->f;
      return TRUE;
    default:
      return FALSE;
  }
}

/* The order of a and b as SPARQL compares numbers (cep_values_compare:
   comparable/5): -1, 0, 1, or 2 for unordered (a NaN); FALSE where C
   does not decide: a value of NUM_OTHER, an integer not exact in a
   double against a double, a decimal against a double (promoted by
   to_double/3), a decimal of NUM_RAT against a number with the same
   double. Two rationals whose doubles differ are in their doubles'
   order: rounding to the nearest double never reverses two numbers. */
static int
num_order(const num_t *a, const num_t *b, int *order)
{ if ( a->kind == NUM_RAT || b->kind == NUM_RAT )
  { double x, y;
    if ( a->kind == NUM_DBL || b->kind == NUM_DBL ||
         !exact_double(a, &x) || !exact_double(b, &y) || x == y )
      return FALSE;
    *order = x < y ? -1 : 1;
    return TRUE;
  }
  if ( a->kind == NUM_DBL || b->kind == NUM_DBL )
  { double x, y;
    if ( a->kind == NUM_DBL ) x = a->f;
    else if ( a->kind == NUM_INT && EXACT_IN_DOUBLE(a->n) ) x = (double)a->n;
    else return FALSE;
    if ( b->kind == NUM_DBL ) y = b->f;
    else if ( b->kind == NUM_INT && EXACT_IN_DOUBLE(b->n) ) y = (double)b->n;
    else return FALSE;
    *order = x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
    return TRUE;
  }
  if ( (a->kind != NUM_INT && a->kind != NUM_DEC) || (b->kind != NUM_INT && b->kind != NUM_DEC) )
    return FALSE;
  *order = a->n < b->n ? -1 : a->n > b->n ? 1 : 0;
  return TRUE;
}

/* The band check's operators: Probe Op Value */
enum { OP_LT, OP_LE, OP_GT, OP_GE };

static int
get_op(term_t t, int *op)
{ atom_t a;

  if ( PL_get_atom(t, &a) )
  { if ( a == ATOM_lt ) { *op = OP_LT; return TRUE; }
    if ( a == ATOM_le ) { *op = OP_LE; return TRUE; }
    if ( a == ATOM_gt ) { *op = OP_GT; return TRUE; }
    if ( a == ATOM_ge ) { *op = OP_GE; return TRUE; }
  }
  return PL_domain_error("band_operator", t);
}

static int
op_holds(int op, int order)
{ switch ( op )
  { case OP_LT: return order == -1;
    case OP_LE: return order == -1 || order == 0;
    case OP_GT: return order == 1;
    default:    return order == 1 || order == 0;
  }
}

static band_store *
find_store(atom_t module, atom_t name)
{ for ( band_store *s = band_stores; s; s = s->next )
  { if ( s->module == module && s->name == name )
      return s;
  }
  return NULL;
}

/* The store Name of Module; made where there is none and `bands` (the
   name of its band list) is given, or `plain` (a plain store) */
static int
get_store(term_t module, term_t name, term_t bands, int plain, band_store **out)
{ atom_t m, n, b;
  band_store *s;

  if ( !PL_get_atom_ex(module, &m) || !PL_get_atom_ex(name, &n) )
    return FALSE;
  if ( (s = find_store(m, n)) || (!bands && !plain) )
  { *out = s;
    return TRUE;
  }
  if ( plain )
    b = n;
  else if ( !PL_get_atom_ex(bands, &b) )
    return FALSE;
  if ( !(s = calloc(1, sizeof(*s))) || !(s->table = calloc(64, sizeof(band_key*))) )
  { free(s);
    return PL_resource_error("memory");
  }
  s->buckets = 64;
  s->plain = plain;
  s->module = m; s->name = n; s->bands_name = b;
  PL_register_atom(m); PL_register_atom(n); PL_register_atom(b);
  s->next = band_stores;
  band_stores = s;
  *out = s;
  return TRUE;
}

/* A join key: an atom (an IRI) or an integer (a hash of the join values,
   cep/compile/clauses.py, key_goal); KEY_ANY where the join variable is
   unbound (compatible with every key: its goals meet every probe, and a
   probe with it visits every key) */
#define KEY_ANY 2

static int
get_key(term_t t, int *is_atom, int64_t *key)
{ atom_t a;

  if ( PL_is_variable(t) )
  { *is_atom = KEY_ANY;
    *key = 0;
    return TRUE;
  }
  if ( PL_get_atom(t, &a) )
  { *is_atom = TRUE;
    *key = (int64_t)a;
    return TRUE;
  }
  *is_atom = FALSE;
  if ( PL_get_int64(t, key) )
    return TRUE;
  return PL_type_error("band_store_key", t);
}

static int
get_band(term_t t, int *other, int64_t *band)
{ atom_t a;

  if ( PL_get_atom(t, &a) && a == ATOM_other )
  { *other = TRUE;
    *band = 0;
    return TRUE;
  }
  *other = FALSE;
  if ( PL_get_int64(t, band) )
    return TRUE;
  return PL_type_error("band", t);
}

static size_t
key_slot(size_t buckets, int is_atom, int64_t key)   /* buckets: a power of two */
{ uint64_t h = ((uint64_t)key + (uint64_t)is_atom) * UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)(h >> 32) & (buckets - 1);
}

static band_key *
find_key(const band_store *s, int is_atom, int64_t key)
{ for ( band_key *k = s->table[key_slot(s->buckets, is_atom, key)]; k; k = k->next )
  { if ( k->key == key && k->is_atom == is_atom )
      return k;
  }
  return NULL;
}

static int
grow_table(band_store *s)
{ size_t n = s->buckets * 2;
  band_key **table = calloc(n, sizeof(band_key*));

  if ( !table )
    return FALSE;
  for ( size_t i = 0; i < s->buckets; i++ )
  { band_key *k = s->table[i], *next;
    for ( ; k; k = next )
    { size_t slot = key_slot(n, k->is_atom, k->key);
      next = k->next;
      k->next = table[slot];
      table[slot] = k;
    }
  }
  free(s->table);
  s->table = table;
  s->buckets = n;
  return TRUE;
}

/* Whether a goal of the bucket has the values (a variant) and interval:
   one that ends at max_te (the common case: goals come as events come,
   in time) is looked for among the last goals, those that end then, and
   not in the whole bucket */
static int
seen_goal(const band_bucket *b, term_t values, int64_t ts, int64_t te, int *seen)
{ *seen = FALSE;
  if ( b->count == 0 || te > b->max_te )
    return TRUE;
  for ( size_t i = te == b->max_te ? b->last_from : 0; i < b->count; i++ )
  { const band_goal *g = &b->goals[i];
    if ( g->ts == ts && g->te == te )
    { term_t args = PL_new_term_refs(2);
      int rc = ( PL_recorded(g->values, args) && PL_put_term(args + 1, values) );
      if ( rc )
      { *seen = PL_call_predicate(NULL, PL_Q_PASS_EXCEPTION, PRED_variant, args);
        rc = !PL_exception(0);
      }
      PL_reset_term_refs(args);
      if ( !rc || *seen )
        return rc;
    }
  }
  return TRUE;
}

/* The key kv of store s, made where it has none */
static band_key *
store_key(band_store *s, int is_atom, int64_t kv)
{ band_key *k;

  if ( (k = find_key(s, is_atom, kv)) )
    return k;
  if ( s->keys >= s->buckets * 2 && !grow_table(s) )
    return NULL;
  if ( !(k = calloc(1, sizeof(*k))) )
    return NULL;
  k->is_atom = is_atom;
  k->key = kv;
  if ( is_atom == TRUE )
    PL_register_atom((atom_t)kv);
  size_t slot = key_slot(s->buckets, is_atom, kv);
  k->next = s->table[slot];
  s->table[slot] = k;
  s->keys++;
  return k;
}

/* The bucket of key k for band (other, bv), made where it has none */
static band_bucket *
key_bucket(band_key *k, int other, int64_t bv)
{ band_bucket *b;

  if ( k->last < k->count && k->bands[k->last]->other == other && k->bands[k->last]->band == bv )
    return k->bands[k->last];
  for ( size_t i = 0; i < k->count; i++ )
  { if ( k->bands[i]->other == other && k->bands[i]->band == bv )
    { k->last = i;
      return k->bands[i];
    }
  }
  if ( !room_for((void**)&k->bands, &k->size, k->count + 1, sizeof(band_bucket*), 4) ||
       !(b = calloc(1, sizeof(*b))) )
    return NULL;
  b->other = other;
  b->band = bv;
  k->last = k->count;
  k->bands[k->count++] = b;
  return b;
}

/* Add the goal to bucket b unless it has one with the same values (a
   variant) and interval (solutions are sets) */
static int
add_goal(band_store *s, band_bucket *b, term_t values, const num_t *value,
         int64_t g, int64_t start, int64_t end)
{ int seen;

  if ( !seen_goal(b, values, start, end, &seen) )
    return FALSE;
  if ( seen )
    return TRUE;
  if ( !room_for((void**)&b->goals, &b->size, b->count + 1, sizeof(band_goal), 4) )
    return PL_resource_error("memory");
  band_goal *goal = &b->goals[b->count];
  if ( !(goal->values = PL_record(values)) )
    return PL_resource_error("memory");
  goal->value = *value;
  goal->gen = g;
  goal->ts = start;
  goal->te = end;
  if ( b->count == 0 || end > b->max_te )
  { b->max_te = end;
    b->last_from = b->count;
  }
  b->count++;
  s->goals++;
  return TRUE;
}

/* c_band_add(+Module, +Store, +Bands, +Key, +Generation, +Values, +Start,
   +End): store the goal in the band of its ordered value (the last
   argument of Values) unless a goal of its key and band has the same
   values (a variant) and interval (solutions are sets) */
static foreign_t
c_band_add(term_t module, term_t name, term_t bands, term_t key, term_t gen,
           term_t values, term_t ts, term_t te)
{ band_store *s;
  band_key *k;
  band_bucket *b;
  int is_atom, other;
  size_t arity;
  int64_t kv, bv, g, start, end;
  num_t value;
  term_t v = PL_new_term_ref();

  if ( !get_store(module, name, bands, FALSE, &s) || !get_key(key, &is_atom, &kv) ||
       !PL_get_int64_ex(gen, &g) || !PL_get_int64_ex(ts, &start) || !PL_get_int64_ex(te, &end) )
    return FALSE;
  if ( !PL_get_name_arity(values, NULL, &arity) || arity == 0 )
    return PL_type_error("band_store_values", values);
  _PL_get_arg(arity, values, v);
  get_num(v, &value);
  if ( !num_band(&value, v, &other, &bv) )
    return FALSE;
  if ( !(k = store_key(s, is_atom, kv)) || !(b = key_bucket(k, other, bv)) )
    return PL_resource_error("memory");
  return add_goal(s, b, values, &value, g, start, end);
}

/* c_seq_add(+Module, +Store, +Key, +Generation, +Values, +Start, +End):
   a goal of a plain SEQ store (cep/compile/steps.py, _seq): its key's
   one bucket, with no ordered value */
static foreign_t
c_seq_add(term_t module, term_t name, term_t key, term_t gen,
          term_t values, term_t ts, term_t te)
{ band_store *s;
  band_key *k;
  band_bucket *b;
  int is_atom;
  int64_t kv, g, start, end;
  num_t none = { NUM_UNBOUND, 0, 0.0 };

  if ( !get_store(module, name, 0, TRUE, &s) || !get_key(key, &is_atom, &kv) ||
       !PL_get_int64_ex(gen, &g) || !PL_get_int64_ex(ts, &start) || !PL_get_int64_ex(te, &end) )
    return FALSE;
  if ( !s->plain )
    return PL_permission_error("add_plain_goal", "band_store", name);
  if ( !(k = store_key(s, is_atom, kv)) || !(b = key_bucket(k, TRUE, 0)) )
    return PL_resource_error("memory");
  return add_goal(s, b, values, &none, g, start, end);
}

/* Whether a goal of band b can meet a right solution of band p: one band
   of slack (cep_fast.pl, cep_band_admits/3); `above` where the check
   wants the stored value above the probe (Probe < Value, Probe =< Value) */
static int
band_admits(int above, const band_bucket *b, int p_other, int64_t p)
{ if ( b->other || p_other )
    return TRUE;
  return above ? b->band >= p - 1 : b->band <= p + 1;
}

typedef struct
{ int     is_atom;
  int64_t key;
} key_id;

typedef struct
{ atom_t  module, name;
  int     plain;            /* a plain store's walk: no band check */
  int     op, above, p_other;
  int64_t p;
  num_t   probe;
  int     has_before, has_since;
  int64_t before, since;    /* the bounds of a goal's end and start */
  key_id *keys;             /* the keys to visit, in order */
  size_t  count;
  size_t  at, band, goal;   /* the next goal to try */
} band_walk;

static void
free_walk(band_walk *w)
{ free(w->keys);
  free(w);
}

/* The keys a probe with key k visits: k and KEY_ANY, or every key where
   k is KEY_ANY */
static int
walk_keys(band_walk *w, const band_store *s, int is_atom, int64_t key)
{ size_t n = 0;

  if ( !(w->keys = malloc((is_atom == KEY_ANY ? s->keys : 2) * sizeof(key_id) + 1)) )
    return FALSE;
  if ( is_atom == KEY_ANY )
  { for ( size_t i = 0; i < s->buckets; i++ )
    { for ( band_key *k = s->table[i]; k; k = k->next )
      { w->keys[n].is_atom = k->is_atom;
        w->keys[n++].key = k->key;
      }
    }
  } else
  { if ( find_key(s, is_atom, key) )
    { w->keys[n].is_atom = is_atom;
      w->keys[n++].key = key;
    }
    if ( find_key(s, KEY_ANY, 0) )
    { w->keys[n].is_atom = KEY_ANY;
      w->keys[n++].key = 0;
    }
  }
  w->count = n;
  return TRUE;
}

/* Whether the goal's value passes Probe Op Value: here where both are
   numbers C compares as SPARQL does, else by cep_compare/4 on the value
   in the goal's record (v: a term ref to use) */
static int
goal_passes(const band_walk *w, const band_goal *g, term_t probe, term_t v, int *passes)
{ int order;

  *passes = FALSE;
  if ( g->value.kind == NUM_UNBOUND )
    return TRUE;
  if ( num_order(&w->probe, &g->value, &order) )
  { *passes = op_holds(w->op, order);
    return TRUE;
  }
  size_t arity;
  term_t args = PL_new_term_refs(4);
  static const char *names[] = { "<", "<=", ">", ">=" };
  int rc = ( PL_recorded(g->values, v) && PL_get_name_arity(v, NULL, &arity) &&
             PL_put_atom_chars(args, names[w->op]) && PL_put_term(args + 1, probe) &&
             PL_get_arg(arity, v, args + 2) && PL_put_atom(args + 3, ATOM_true) );
  if ( rc )
  { *passes = PL_call_predicate(NULL, PL_Q_PASS_EXCEPTION, PRED_cep_compare, args);
    rc = !PL_exception(0);
  }
  PL_reset_term_refs(args);
  return rc;
}

static int
get_bound(term_t t, int *has, int64_t *bound)
{ *has = !PL_is_variable(t);
  return !*has || PL_get_int64_ex(t, bound);
}

/* Move walk w's cursor to its next goal within the bounds and the bands
   it admits, without taking it; NULL where there is none */
static band_goal *
walk_next(band_walk *w, const band_store *s)
{ for ( ; w->at < w->count; w->at++, w->band = 0, w->goal = 0 )
  { band_key *k = find_key(s, w->keys[w->at].is_atom, w->keys[w->at].key);
    if ( !k )
      continue;
    for ( ; w->band < k->count; w->band++, w->goal = 0 )
    { band_bucket *b = k->bands[w->band];
      if ( !w->plain && !band_admits(w->above, b, w->p_other, w->p) )
        continue;
      for ( ; w->goal < b->count; w->goal++ )
      { band_goal *g = &b->goals[w->goal];
        if ( !((w->has_before && g->te >= w->before) || (w->has_since && g->ts < w->since)) )
          return g;
      }
    }
  }
  return NULL;
}

/* The next goal of walk w (made by the first call of c_band_goal/10 or
   c_seq_goal/8), unified with Values, Start and End; deterministic on
   the last (no choice point left where no goal is left to try). The
   store, key and bucket are looked up again at each step, so nothing the
   caller does in between (it adds goals to other stores) can leave a
   dangling pointer. */
static foreign_t
walk_goals(band_walk *w, term_t probe, term_t values, term_t ts, term_t te)
{ band_store *s;
  band_goal *g;
  fid_t fid;
  term_t v = PL_new_term_ref();                 /* before the frame: rewinding it drops later refs */

  if ( !(s = find_store(w->module, w->name)) || !(fid = PL_open_foreign_frame()) )
  { free_walk(w);
    return FALSE;
  }
  while ( (g = walk_next(w, s)) )
  { int passes = TRUE;
    w->goal++;                                  /* taken */
    if ( (w->plain || goal_passes(w, g, probe, v, &passes)) && passes &&
         PL_recorded(g->values, v) && PL_unify(values, v) &&
         PL_unify_int64(ts, g->ts) && PL_unify_int64(te, g->te) )
    { PL_close_foreign_frame(fid);
      if ( !walk_next(w, s) )
      { free_walk(w);
        return TRUE;
      }
      PL_retry_address(w);
    }
    if ( PL_exception(0) )
    { PL_close_foreign_frame(fid);
      free_walk(w);
      return FALSE;
    }
    PL_rewind_foreign_frame(fid);
  }
  PL_close_foreign_frame(fid);
  free_walk(w);
  return FALSE;
}

/* A walk as w0 over the keys of store s that key (is_atom, kv) meets,
   for c_band_goal/10 and c_seq_goal/8 to go on with; NULL where memory
   runs out */
static band_walk *
new_walk(const band_walk *w0, const band_store *s, int is_atom, int64_t kv)
{ band_walk *w = malloc(sizeof(*w));

  if ( !w )
    return NULL;
  *w = *w0;
  if ( !walk_keys(w, s, is_atom, kv) )
  { free(w);
    return NULL;
  }
  return w;
}

/* c_band_goal(+Module, +Store, +Key, +Op, +Probe, ?Before, ?Since, ?Values,
   ?Start, ?End) is nondet: the goals of Key whose ordered value V passes
   the band check Probe Op V (Op one of <, <=, >, >=), that end before
   Before and start at or after Since (either unbound: no bound), in
   order. The bands are those Op's direction admits from Probe's band. */
static foreign_t
c_band_goal(term_t a0, int arity, control_t h)
{ term_t module = a0, name = a0 + 1, key = a0 + 2, op = a0 + 3, probe = a0 + 4,
         before = a0 + 5, since = a0 + 6, values = a0 + 7, ts = a0 + 8, te = a0 + 9;
  band_walk *w;
  band_store *s;

  (void)arity;
  switch ( PL_foreign_control(h) )
  { case PL_FIRST_CALL:
    { band_walk w0;
      int is_atom;
      int64_t kv;
      memset(&w0, 0, sizeof(w0));
      if ( !PL_get_atom_ex(module, &w0.module) || !PL_get_atom_ex(name, &w0.name) ||
           !get_key(key, &is_atom, &kv) || !get_op(op, &w0.op) ||
           !get_bound(before, &w0.has_before, &w0.before) ||
           !get_bound(since, &w0.has_since, &w0.since) )
        return FALSE;
      get_num(probe, &w0.probe);
      if ( w0.probe.kind == NUM_UNBOUND )       /* an error: no goal passes */
        return FALSE;
      if ( !num_band(&w0.probe, probe, &w0.p_other, &w0.p) )
        return FALSE;
      w0.above = (w0.op == OP_LT || w0.op == OP_LE);
      if ( !(s = find_store(w0.module, w0.name)) )
        return FALSE;
      if ( !(w = new_walk(&w0, s, is_atom, kv)) )
        return PL_resource_error("memory");
      break;
    }
    case PL_REDO:
      w = PL_foreign_context_address(h);
      break;
    case PL_PRUNED:
      free_walk(PL_foreign_context_address(h));
      return TRUE;
    default:
      return FALSE;
  }
  return walk_goals(w, probe, values, ts, te);
}

/* c_seq_goal(+Module, +Store, +Key, ?Before, ?Since, ?Values, ?Start,
   ?End) is nondet: the goals of a plain store (c_seq_add/7) of Key (and
   those stored with the key unbound, KEY_ANY; every key's where Key is
   unbound) that end before Before and start at or after Since (either
   unbound: no bound), each key's in the order they came */
static foreign_t
c_seq_goal(term_t a0, int arity, control_t h)
{ term_t module = a0, name = a0 + 1, key = a0 + 2, before = a0 + 3, since = a0 + 4,
         values = a0 + 5, ts = a0 + 6, te = a0 + 7;
  band_walk *w;
  band_store *s;

  (void)arity;
  switch ( PL_foreign_control(h) )
  { case PL_FIRST_CALL:
    { band_walk w0;
      int is_atom;
      int64_t kv;
      memset(&w0, 0, sizeof(w0));
      w0.plain = TRUE;
      if ( !PL_get_atom_ex(module, &w0.module) || !PL_get_atom_ex(name, &w0.name) ||
           !get_key(key, &is_atom, &kv) ||
           !get_bound(before, &w0.has_before, &w0.before) ||
           !get_bound(since, &w0.has_since, &w0.since) )
        return FALSE;
      if ( !(s = find_store(w0.module, w0.name)) )
        return FALSE;
      if ( is_atom != KEY_ANY && !find_key(s, is_atom, kv) && !find_key(s, KEY_ANY, 0) )
        return FALSE;                           /* the common miss: no walk to make */
      if ( !(w = new_walk(&w0, s, is_atom, kv)) )
        return PL_resource_error("memory");
      break;
    }
    case PL_REDO:
      w = PL_foreign_context_address(h);
      break;
    case PL_PRUNED:
      free_walk(PL_foreign_context_address(h));
      return TRUE;
    default:
      return FALSE;
  }
  return walk_goals(w, 0, values, ts, te);
}

static void
free_key(band_key *k)
{ for ( size_t i = 0; i < k->count; i++ )
  { band_bucket *b = k->bands[i];
    for ( size_t j = 0; j < b->count; j++ )
      PL_erase(b->goals[j].values);
    free(b->goals);
    free(b);
  }
  free(k->bands);
  if ( k->is_atom == TRUE )
    PL_unregister_atom((atom_t)k->key);
  free(k);
}

/* Drop the goals of generation =< Max, then the bands and keys left
   empty; what stays keeps its order */
static void
expire_store(band_store *s, int64_t max, int all)
{ for ( size_t i = 0; i < s->buckets; i++ )
  { band_key **link = &s->table[i];
    while ( *link )
    { band_key *k = *link;
      size_t kept_bands = 0;
      for ( size_t j = 0; j < k->count; j++ )
      { band_bucket *b = k->bands[j];
        size_t kept = 0, last_from = 0;
        for ( size_t n = 0; n < b->count; n++ )
        { if ( n == b->last_from )
            last_from = kept;
          if ( all || b->goals[n].gen <= max )
          { PL_erase(b->goals[n].values);
            s->goals--;
          } else
            b->goals[kept++] = b->goals[n];
        }
        b->last_from = b->last_from < b->count ? last_from : kept;
        b->count = kept;
        if ( kept )
          k->bands[kept_bands++] = b;
        else
        { free(b->goals);
          free(b);
        }
      }
      k->count = kept_bands;
      if ( kept_bands )
        link = &k->next;
      else
      { *link = k->next;
        free_key(k);
        s->keys--;
      }
    }
  }
}

/* c_band_expire(+Module, +Store, +Max) */
static foreign_t
c_band_expire(term_t module, term_t name, term_t max)
{ band_store *s;
  int64_t m;

  if ( !get_store(module, name, 0, FALSE, &s) || !PL_get_int64_ex(max, &m) )
    return FALSE;
  if ( s )
    expire_store(s, m, FALSE);
  return TRUE;
}

/* c_band_clear(+Module): drop Module's stores, their goals with them (an
   add makes a store again: get_store), so that a rule set unloaded
   (cep_unload/1) leaves nothing in the list every lookup walks */
static foreign_t
c_band_clear(term_t module)
{ atom_t m;

  if ( !PL_get_atom_ex(module, &m) )
    return FALSE;
  for ( band_store **link = &band_stores; *link; )
  { band_store *s = *link;
    if ( s->module != m )
    { link = &s->next;
      continue;
    }
    expire_store(s, 0, TRUE);
    *link = s->next;
    PL_unregister_atom(s->module); PL_unregister_atom(s->name); PL_unregister_atom(s->bands_name);
    free(s->table);
    free(s);
  }
  return TRUE;
}

/* c_band_count(+Module, -Count): the goals of Module's stores */
static foreign_t
c_band_count(term_t module, term_t count)
{ atom_t m;
  int64_t n = 0;

  if ( !PL_get_atom_ex(module, &m) )
    return FALSE;
  for ( band_store *s = band_stores; s; s = s->next )
  { if ( s->module == m )
      n += (int64_t)s->goals;
  }
  return PL_unify_int64(count, n);
}

/* c_band_goals(+Module, -Goals): every goal of Module's band stores, a term
   band_goals(Store, Bands, Key, Band, [g(Generation, Values, Start, End),
   ...]) for each key and band, in the order c_band_add/8 takes them back
   (cep_runtime:cep_dump/2): the names, the key and the band once for all
   their goals, so a state is no larger than the dynamic facts' */
static foreign_t
c_band_goals(term_t module, term_t goals)
{ atom_t m;
  term_t list = PL_copy_term_ref(goals);
  term_t head = PL_new_term_ref();
  term_t args = PL_new_term_refs(5);
  term_t items = PL_new_term_ref();
  term_t item = PL_new_term_ref();
  term_t values = PL_new_term_ref();

  if ( !PL_get_atom_ex(module, &m) )
    return FALSE;
  for ( band_store *s = band_stores; s; s = s->next )
  { if ( s->module != m || s->plain )
      continue;
    for ( size_t i = 0; i < s->buckets; i++ )
    { for ( band_key *k = s->table[i]; k; k = k->next )
      { for ( size_t j = 0; j < k->count; j++ )
        { band_bucket *b = k->bands[j];
          if ( !PL_put_atom(args, s->name) || !PL_put_atom(args + 1, s->bands_name) ||
               !(k->is_atom == KEY_ANY ? PL_put_variable(args + 2) :
                 k->is_atom ? PL_put_atom(args + 2, (atom_t)k->key) : PL_put_int64(args + 2, k->key)) ||
               !(b->other ? PL_put_atom(args + 3, ATOM_other) : PL_put_int64(args + 3, b->band)) ||
               !PL_put_nil(args + 4) )
            return FALSE;
          for ( size_t n = b->count; n-- > 0; )   /* the list is made from its end */
          { band_goal *g = &b->goals[n];
            if ( !PL_recorded(g->values, values) ||
                 !PL_unify_term(item, PL_FUNCTOR, FUNCTOR_g4, PL_INT64, g->gen, PL_TERM, values,
                                PL_INT64, g->ts, PL_INT64, g->te) ||
                 !PL_cons_list(args + 4, item, args + 4) )
              return FALSE;
            PL_put_variable(item);
          }
          if ( !PL_unify_list(list, head, list) ||
               !PL_cons_functor_v(items, FUNCTOR_band_goals5, args) ||
               !PL_unify(head, items) )
            return FALSE;
        }
      }
    }
  }
  return PL_unify_nil(list);
}

/* c_seq_goals(+Module, -Facts): every goal of Module's plain stores as
   the fact Store(Key, Generation, Values, Start, End) that holds it
   without the library (Key unbound for KEY_ANY), each key's in the
   order they came (cep_runtime:cep_dump/2) */
static foreign_t
c_seq_goals(term_t module, term_t facts)
{ atom_t m;
  term_t list = PL_copy_term_ref(facts);
  term_t head = PL_new_term_ref();
  term_t args = PL_new_term_refs(5);
  term_t fact = PL_new_term_ref();

  if ( !PL_get_atom_ex(module, &m) )
    return FALSE;
  for ( band_store *s = band_stores; s; s = s->next )
  { if ( s->module != m || !s->plain )
      continue;
    functor_t f = PL_new_functor(s->name, 5);
    for ( size_t i = 0; i < s->buckets; i++ )
    { for ( band_key *k = s->table[i]; k; k = k->next )
      { for ( size_t j = 0; j < k->count; j++ )
        { band_bucket *b = k->bands[j];
          for ( size_t n = 0; n < b->count; n++ )
          { band_goal *g = &b->goals[n];
            if ( !(k->is_atom == KEY_ANY ? PL_put_variable(args) :
                   k->is_atom ? PL_put_atom(args, (atom_t)k->key) : PL_put_int64(args, k->key)) ||
                 !PL_put_int64(args + 1, g->gen) || !PL_recorded(g->values, args + 2) ||
                 !PL_put_int64(args + 3, g->ts) || !PL_put_int64(args + 4, g->te) ||
                 !PL_cons_functor_v(fact, f, args) ||
                 !PL_unify_list(list, head, list) || !PL_unify(head, fact) )
              return FALSE;
          }
        }
      }
    }
  }
  return PL_unify_nil(list);
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
  PL_register_foreign("c_counted_item", 5, c_counted_item, PL_FA_NONDETERMINISTIC);
  PL_register_foreign("c_room_reset", 1, c_room_reset, 0);
  PL_register_foreign("c_room_item", 1, c_room_item, 0);
  PL_register_foreign("c_room_take", 1, c_room_take, 0);
  PL_register_foreign("c_room_most", 1, c_room_most, 0);
  PL_register_foreign("c_room_place", 1, c_room_place, 0);
  PL_register_foreign("c_iri_plain", 1, c_iri_plain, 0);
  PL_register_foreign("c_answer_text", 2, c_answer_text, 0);
  FUNCTOR_ans4 = PL_new_functor(PL_new_atom("ans"), 4);
  FUNCTOR_var1 = PL_new_functor(PL_new_atom("$VAR"), 1);
  PL_register_foreign("c_answers_text", 4, c_answers_text, 0);
  PL_register_foreign("c_band", 2, c_band, 0);
  PL_register_foreign("c_source", 1, c_source, 0);
  FUNCTOR_band_goals5 = PL_new_functor(PL_new_atom("band_goals"), 5);
  FUNCTOR_g4 = PL_new_functor(PL_new_atom("g"), 4);
  ATOM_other = PL_new_atom("other");
  ATOM_lt = PL_new_atom("<");
  ATOM_le = PL_new_atom("<=");
  ATOM_gt = PL_new_atom(">");
  ATOM_ge = PL_new_atom(">=");
  ATOM_true = PL_new_atom("true");
  PRED_variant = PL_predicate("=@=", 2, "system");
  PRED_cep_band = PL_predicate("cep_band", 2, "cep_values_compare");
  PRED_cep_compare = PL_predicate("cep_compare", 4, "cep_values_compare");
  PL_register_foreign("c_band_add", 8, c_band_add, 0);
  PL_register_foreign("c_band_goal", 10, c_band_goal, PL_FA_NONDETERMINISTIC|PL_FA_VARARGS);
  PL_register_foreign("c_band_expire", 3, c_band_expire, 0);
  PL_register_foreign("c_band_clear", 1, c_band_clear, 0);
  PL_register_foreign("c_band_count", 2, c_band_count, 0);
  PL_register_foreign("c_band_goals", 2, c_band_goals, 0);
  PL_register_foreign("c_seq_add", 7, c_seq_add, 0);
  PL_register_foreign("c_seq_goal", 8, c_seq_goal, PL_FA_NONDETERMINISTIC|PL_FA_VARARGS);
  PL_register_foreign("c_seq_goals", 2, c_seq_goals, 0);
  PRED_cep_nt = PL_predicate("cep_nt", 2, "cep_values");
}
