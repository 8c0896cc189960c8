/*  batch_text: the text of an event batch (cep/runtime/batch.py), made in
    C from the buffers of Arrow string and int64 arrays, and the check
    that a column's terms are canonical already (cep/io/tables.py), which
    runs before it on rows that come unchecked (Spark's workers). Python
    calls it through ctypes where cep/runtime/native.py built it, and does
    the same with Arrow's kernels where it did not.

    cep_term_fields(N, Offsets, Data, Valid, Offset, OutOffsets, OutData,
    OutValid) writes the batch fields of N canonical N-Triples terms (an
    Arrow string array: its int32 offsets, data and validity bitmap, or
    NULL for none, and its offset), as an Arrow string array: OutOffsets
    (N + 1 of them), OutData (at least the terms' bytes + FIELD_EXTRA a
    term) and OutValid (a bitmap, zeroed by the caller). A term of a shape
    below gets its field and its valid bit; any other (and a null) is left
    null, for batch.py's slow path (cep.terms.prolog_text):
        <iri>                      I<iri>   ASCII with nothing N-Triples escapes
        "digits"^^xsd:integer      i<digits>   canonical: -?, no leading zero
        "text"                     P"text"   ASCII, no backslash, no control
        "lexical"^^xsd:decimal     Pdec(N) or Pdec(NrD), or for a lexical
                                   form that is not canonical
                                   Plv("lexical",'xsd:decimal',dec(...)),
                                   N/D the value in lowest terms, where the
                                   lexical form is [+-]?digits[.digits]
                                   with at most 18 significant and 18
                                   fractional digits (int64 arithmetic)
    Returns the number of nulls, or -1 when OutData would pass 2 GiB.

    cep_batch_lines(N, S, P, O, Start, End, Out) writes the lines of a
    batch, `S TAB P TAB O TAB Start TAB End NEWLINE`, from three field
    arrays (each an int32 offsets pointer, a data pointer and an offset;
    no nulls) and two int64 arrays (pointers to their first value), into
    Out (at least the fields' bytes + LINE_EXTRA a line). Returns the
    bytes written, or -1 when a field holds a byte that is not ASCII.

    cep_canonical_terms(N, Offsets, Data, Valid, Offset, Slot, Out) sets
    Out[i] to 1 for each term of an Arrow string array that is in a
    canonical form the checks of cep/io/tables.py take as it is (a subset
    of FAST_TERM's, which read the others): for Slot 's' an IRI or a blank
    node, for 'p' an IRI, for 'o' also a plain string, a canonical
    xsd:integer or xsd:decimal; all in ASCII and at most FAST_LENGTH bytes.

    cep_batch_source() is the SHA-256 (hex) of this file as it was built
    (cep/runtime/native.py compiles it in): batch.py uses no library built
    from another version of it.
*/

#include <stdint.h>
#include <string.h>

#ifndef CEP_BATCH_SOURCE
#define CEP_BATCH_SOURCE "unknown"    /* built otherwise than by cep/runtime/native.py */
#endif

#define FIELD_EXTRA 64                /* a field is at most its term's length + this */
#define LINE_EXTRA 48                 /* 2 times 20 digits and a sign, 4 tabs, a newline */
#define DEC_DIGITS 18                 /* digits kept in int64 arithmetic (batch.py's _DEC_DIGITS) */

const char *cep_batch_source(void) { return CEP_BATCH_SOURCE; }
int64_t cep_field_extra(void) { return FIELD_EXTRA; }
int64_t cep_line_extra(void) { return LINE_EXTRA; }

static const char INTEGER_SUFFIX[] = "\"^^<http://www.w3.org/2001/XMLSchema#integer>";
static const char DECIMAL_SUFFIX[] = "\"^^<http://www.w3.org/2001/XMLSchema#decimal>";
static const char XSD_DECIMAL[] = "http://www.w3.org/2001/XMLSchema#decimal";
#define SUFFIX_LEN ((int64_t)sizeof INTEGER_SUFFIX - 1)   /* both suffixes are this long */

/* Which bytes keep a term off its fast shape, a bit each: NOT_IRI those
   that keep an IRI off the verbatim I form (batch.py's _NOT_VERBATIM: the
   bytes N-Triples escapes, the batch's separators, the angle brackets, and
   any byte that is not ASCII), NOT_PLAIN those that keep a string off the
   plain P form (an escape, a control character, a byte that is not ASCII).
   (A table of each call's, filled in less time than a hundred terms take.) */
#define NOT_IRI 1
#define NOT_PLAIN 2

static void classes(uint8_t byte_class[256])
{ for (int c = 0; c < 256; c++)
  { int not_iri = c <= 0x20 || c >= 0x80 || (c && strchr("<>\"{}|^`\\", c));
    int not_plain = c < 0x20 || c >= 0x80 || c == '\\';
    byte_class[c] = (uint8_t)((not_iri ? NOT_IRI : 0) | (not_plain ? NOT_PLAIN : 0));
  }
}

static int any_of(const uint8_t byte_class[256], const uint8_t *t, int64_t len, uint8_t class)
{ uint8_t seen = 0;
  for (int64_t i = 0; i < len; i++)
    seen |= byte_class[t[i]];
  return seen & class;
}

static int ends_with(const uint8_t *t, int64_t len, const char *suffix, int64_t n)
{ return len >= n && memcmp(t + len - n, suffix, (size_t)n) == 0;
}

static int all_digits(const uint8_t *t, int64_t len)   /* (none: false, as Arrow's ascii_is_decimal) */
{ if ( len == 0 )
    return 0;
  for (int64_t i = 0; i < len; i++)
    if ( t[i] < '0' || t[i] > '9' )
      return 0;
  return 1;
}

static uint8_t *put(uint8_t *out, const void *text, int64_t len)
{ memcpy(out, text, (size_t)len);
  return out + len;
}

static uint8_t *put_int(uint8_t *out, int64_t v)
{ static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                              "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                              "8081828384858687888990919293949596979899";
  char digits[24];
  int n = sizeof digits;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  while ( u >= 100 )                                   /* two digits a division */
  { memcpy(digits + (n -= 2), pairs + 2*(u % 100), 2);
    u /= 100;
  }
  if ( u >= 10 )
    memcpy(digits + (n -= 2), pairs + 2*u, 2);
  else
    digits[--n] = (char)('0' + u);
  if ( v < 0 )
    *out++ = '-';
  return put(out, digits + n, (int64_t)sizeof digits - n);
}

/* The field of an xsd:decimal literal whose lexical form is lex[0..len),
   or NULL (not of the form taken here). */
static uint8_t *decimal_field(uint8_t *out, const uint8_t *lex, int64_t len)
{ int negative = len > 0 && lex[0] == '-';
  int signed_ = len > 0 && (lex[0] == '-' || lex[0] == '+');
  const uint8_t *u = lex + signed_, *end = lex + len;
  const uint8_t *point = memchr(u, '.', (size_t)(end - u));
  const uint8_t *whole = u, *written = point ? point + 1 : end;
  int64_t whole_len = (point ? point : end) - u, written_len = end - written;

  if ( (whole_len && !all_digits(whole, whole_len)) || (written_len && !all_digits(written, written_len)) ||
       whole_len + written_len == 0 )
    return NULL;
  int64_t places = written_len;                        /* the fraction without its trailing zeros */
  while ( places > 0 && written[places-1] == '0' )
    places--;
  int64_t lead = 0;                                    /* the leading zeros of whole + fraction */
  while ( lead < whole_len && whole[lead] == '0' )
    lead++;
  if ( lead == whole_len )
    while ( lead - whole_len < places && written[lead-whole_len] == '0' )
      lead++;
  if ( whole_len + places - lead > DEC_DIGITS || places > DEC_DIGITS )
    return NULL;
  int64_t num = 0;
  for (int64_t i = lead; i < whole_len + places; i++)
    num = num*10 + ((i < whole_len ? whole[i] : written[i-whole_len]) - '0');
  int canonical = lex[0] != '+' && whole_len && written_len &&
                  (whole[0] != '0' || whole_len == 1) && (written[written_len-1] != '0' || written_len == 1) &&
                  !(negative && num == 0);
  int64_t twos = num ? places : 0, fives = twos, den = 1;
  while ( twos > 0 && num % 2 == 0 ) { num /= 2; twos--; }
  while ( fives > 0 && num % 5 == 0 ) { num /= 5; fives--; }
  while ( twos-- > 0 ) den *= 2;
  while ( fives-- > 0 ) den *= 5;

  *out++ = 'P';
  if ( !canonical )
  { out = put(out, "lv(\"", 4);
    out = put(out, lex, len);
    out = put(out, "\",'", 3);
    out = put(out, XSD_DECIMAL, (int64_t)sizeof XSD_DECIMAL - 1);
    out = put(out, "',", 2);
  }
  out = put(out, "dec(", 4);
  out = put_int(out, negative && num ? -num : num);
  if ( den != 1 )
  { *out++ = 'r';
    out = put_int(out, den);
  }
  *out++ = ')';
  if ( !canonical )
    *out++ = ')';
  return out;
}

/* The field of the term t[0..len), or NULL (the slow path's). */
static uint8_t *term_field(const uint8_t byte_class[256], uint8_t *out, const uint8_t *t, int64_t len)
{ if ( len == 0 )
    return NULL;
  if ( t[0] == '<' )
  { if ( len < 2 || t[len-1] != '>' )
      return NULL;
    if ( any_of(byte_class, t + 1, len - 2, NOT_IRI) )
      return NULL;
    *out++ = 'I';
    return put(out, t + 1, len - 2);
  }
  if ( t[0] != '"' )
    return NULL;
  if ( t[len-1] == '"' )                               /* a plain string */
  { if ( any_of(byte_class, t, len, NOT_PLAIN) )
      return NULL;
    *out++ = 'P';
    return put(out, t, len);
  }
  if ( ends_with(t, len, INTEGER_SUFFIX, SUFFIX_LEN) )
  { const uint8_t *body = t + 1;
    int64_t body_len = len - SUFFIX_LEN - 1;           /* (the term the suffix alone: -1, none) */
    if ( body_len <= 0 )
      return NULL;
    const uint8_t *digits = body + (body[0] == '-');
    int64_t digits_len = body_len - (body[0] == '-');
    if ( !all_digits(digits, digits_len) || (digits[0] == '0' && body_len != 1) )
      return NULL;
    *out++ = 'i';
    return put(out, body, body_len);
  }
  if ( ends_with(t, len, DECIMAL_SUFFIX, SUFFIX_LEN) && len > SUFFIX_LEN )
    return decimal_field(out, t + 1, len - SUFFIX_LEN - 1);
  return NULL;
}

int64_t cep_term_fields(int64_t n, const int32_t *offsets, const uint8_t *data, const uint8_t *valid,
                        int64_t offset, int32_t *out_offsets, uint8_t *out_data, uint8_t *out_valid)
{ int64_t nulls = 0;
  uint8_t *out = out_data;

  if ( (int64_t)(offsets[offset+n] - offsets[offset]) + n*FIELD_EXTRA > INT32_MAX )
    return -1;
  uint8_t byte_class[256];
  classes(byte_class);
  out_offsets[0] = 0;
  for (int64_t i = 0; i < n; i++)
  { int64_t j = offset + i;
    uint8_t *made = NULL;
    if ( !valid || (valid[j >> 3] >> (j & 7) & 1) )
      made = term_field(byte_class, out, data + offsets[j], offsets[j+1] - offsets[j]);
    if ( made )
    { out = made;
      out_valid[i >> 3] |= (uint8_t)(1 << (i & 7));
    } else
      nulls++;
    out_offsets[i+1] = (int32_t)(out - out_data);
  }
  return nulls;
}

static uint8_t *put_field(uint8_t *out, const int32_t *offsets, const uint8_t *data, int64_t j)
{ return put(out, data + offsets[j], offsets[j+1] - offsets[j]);
}

static int ascii(const uint8_t *t, int64_t len)
{ uint64_t seen = 0, word;
  int64_t i = 0;
  for (; i + 8 <= len; i += 8)
  { memcpy(&word, t + i, 8);
    seen |= word;
  }
  for (; i < len; i++)
    seen |= t[i];
  return !(seen & 0x8080808080808080ULL);
}

int64_t cep_batch_lines(int64_t n,
                        const int32_t *s_offsets, const uint8_t *s_data, int64_t s_offset,
                        const int32_t *p_offsets, const uint8_t *p_data, int64_t p_offset,
                        const int32_t *o_offsets, const uint8_t *o_data, int64_t o_offset,
                        const int64_t *start, const int64_t *end, uint8_t *out_data)
{ uint8_t *out = out_data;

  for (int64_t i = 0; i < n; i++)
  { out = put_field(out, s_offsets, s_data, s_offset + i);
    *out++ = '\t';
    out = put_field(out, p_offsets, p_data, p_offset + i);
    *out++ = '\t';
    out = put_field(out, o_offsets, o_data, o_offset + i);
    *out++ = '\t';
    uint8_t *time = out;
    out = put_int(out, start[i]);
    *out++ = '\t';
    if ( end[i] == start[i] )                          /* an event at an instant, the usual one */
      out = put(out, time, out - 1 - time);
    else
      out = put_int(out, end[i]);
    *out++ = '\n';
  }
  return ascii(out_data, out - out_data) ? out - out_data : -1;
}

/* The canonical checks of cep/io/tables.py's FAST_TERM, for the shapes
   most events have (a term of another is checked by its regular expression). */
#define FAST_LENGTH 1000

static int alpha(uint8_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static int digit(uint8_t c) { return c >= '0' && c <= '9'; }

static int canonical_iri(const uint8_t byte_class[256], const uint8_t *t, int64_t len)
{ if ( len < 4 || t[0] != '<' || t[len-1] != '>' || !alpha(t[1]) )
    return 0;
  int64_t i = 2;                                       /* the scheme, then its colon */
  while ( i < len-1 && (alpha(t[i]) || digit(t[i]) || t[i] == '+' || t[i] == '.' || t[i] == '-') )
    i++;
  return i < len-1 && t[i] == ':' && !any_of(byte_class, t + i + 1, len - i - 2, NOT_IRI);
}

static int canonical_bnode(const uint8_t *t, int64_t len)
{ if ( len < 3 || t[0] != '_' || t[1] != ':' )
    return 0;
  for (int64_t i = 2; i < len; i++)
    if ( !(alpha(t[i]) || digit(t[i]) || t[i] == '_' || (i > 2 && (t[i] == '.' || t[i] == '-'))) )
      return 0;
  return 1;
}

static int canonical_literal(const uint8_t byte_class[256], const uint8_t *t, int64_t len)
{ if ( len < 2 || t[0] != '"' )
    return 0;
  if ( t[len-1] == '"' )                               /* a plain string: no quote, escape or control inside */
  { for (int64_t i = 1; i < len-1; i++)
      if ( t[i] == '"' || t[i] == 0x7f || (byte_class[t[i]] & NOT_PLAIN) )
        return 0;
    return 1;
  }
  int integer = ends_with(t, len, INTEGER_SUFFIX, SUFFIX_LEN);
  if ( !integer && !ends_with(t, len, DECIMAL_SUFFIX, SUFFIX_LEN) )
    return 0;
  const uint8_t *b = t + 1, *end = t + len - SUFFIX_LEN;   /* the lexical form */
  int negative = b < end && *b == '-';
  b += negative;
  const uint8_t *whole = b;
  while ( b < end && digit(*b) )
    b++;
  int64_t whole_len = b - whole;
  if ( whole_len == 0 || (whole[0] == '0' && whole_len > 1) )
    return 0;
  if ( integer )                                       /* 0 or -?[1-9][0-9]* */
    return b == end && !(negative && whole[0] == '0');
  if ( b == end || *b++ != '.' )                       /* -?(0|[1-9][0-9]*) . digits */
    return 0;
  const uint8_t *frac = b;
  while ( b < end && digit(*b) )
    b++;
  int64_t frac_len = b - frac;
  if ( b != end || frac_len == 0 )
    return 0;
  if ( frac[frac_len-1] != '0' )                       /* no trailing zero */
    return 1;
  return frac_len == 1 && !(negative && whole[0] == '0');   /* N.0, and 0.0 unsigned */
}

void cep_canonical_terms(int64_t n, const int32_t *offsets, const uint8_t *data, const uint8_t *valid,
                         int64_t offset, int64_t slot, uint8_t *out)
{ uint8_t byte_class[256];
  classes(byte_class);
  for (int64_t i = 0; i < n; i++)
  { int64_t j = offset + i;
    const uint8_t *t = data + offsets[j];
    int64_t len = offsets[j+1] - offsets[j];
    out[i] = 0;
    if ( (valid && !(valid[j >> 3] >> (j & 7) & 1)) || len > FAST_LENGTH || len == 0 )
      continue;
    if ( t[0] == '<' )
      out[i] = (uint8_t)canonical_iri(byte_class, t, len);
    else if ( t[0] == '_' )
      out[i] = (uint8_t)(slot != 'p' && canonical_bnode(t, len));
    else if ( t[0] == '"' )
      out[i] = (uint8_t)(slot == 'o' && canonical_literal(byte_class, t, len));
  }
}
