/* Untrusted bytes made safe for a line a human reads: agenttrace's lines
 * on stderr (alerts, the summary, errors), the GitHub annotations and step
 * summary, the text and Markdown reports.  A file name, an argv element or
 * a script is the command's choice, and a terminal or a CI runner acts on
 * some bytes: ESC sequences repaint a terminal (or set its title, or worse),
 * a newline starts a line the reader takes for agenttrace's own, and a line
 * that begins with "::" is a GitHub workflow command (::error::,
 * ::add-mask::, ::stop-commands::).  Every such output goes through here.
 *
 * What is escaped, as the four characters \xHH per byte:
 *  - the C0 controls U+0000-U+001F (newline, CR, ESC, TAB unless kept),
 *    DEL U+007F, and the C1 controls U+0080-U+009F (also as UTF-8);
 *  - the line and paragraph separators U+2028 and U+2029, which some
 *    viewers break lines at, and the bidirectional embeddings, overrides
 *    and isolates U+202A-U+202E and U+2066-U+2069, which show text in
 *    another order than it is (a name that reads as another);
 *  - every byte that is not part of valid UTF-8 (RFC 3629: no overlongs,
 *    surrogates or values above U+10FFFF).
 * A backslash stays as it is, as in the records (agenttrace(1), RECORDS):
 * "\x" in a name reads the same as an escape, which a reader resolves with
 * the record's JSON. */
#ifndef AGENTTRACE_LIB_TEXTESC_H
#define AGENTTRACE_LIB_TEXTESC_H

#include <stddef.h>
#include <stdio.h>

/* Flags. */
#define TEXTESC_KEEP_TAB 0x1u /* a TAB stays (script text, meant to be read as text) */
#define TEXTESC_LINE 0x2u     /* the text starts a line: a leading ':' becomes \x3A, so
			       * that it cannot begin a workflow command ("::") */

/* S (LEN bytes) escaped into OUT (SIZE bytes, at least 1, always
 * NUL-terminated); what does not fit is cut before an escape or a UTF-8
 * sequence, never inside one.  Returns the length written. */
size_t textesc(const char *s, size_t len, unsigned flags, char *out, size_t size);

/* S (LEN bytes; a C string for the second) escaped onto F. */
void textesc_fput(FILE *f, const char *s, size_t len, unsigned flags);
void textesc_fputs(FILE *f, const char *s, unsigned flags);

/* Text for a Markdown table cell or paragraph, onto F: escaped as above,
 * then every character Markdown or HTML gives a meaning inside a line
 * (& < > " | \ ` * _ $ ~ [ ]) as an HTML character reference, so that a
 * file name cannot add markup, links, images, table columns or math.
 * Inside <code>...</code> too (entities are decoded there, unlike in a
 * backtick span).  The text never starts a line, so '#', '>' and '-'
 * cannot open a heading, a quote or a list. */
void textesc_markdown(FILE *f, const char *s);

#endif
