/* tokens.c — a cheap token estimate for budgeting prompts without loading
 * a tokenizer: letters cost about one token per four, each digit one token
 * (Qwen2 tokenizers split numbers into digits), each punctuation mark one,
 * each non-ASCII character one, and spaces ride along with the next word. */
#include "schema/schema.h"

#include <ctype.h>

size_t tt_tokens_estimate(const char *text, size_t n) {
  const unsigned char *p = (const unsigned char *)text;
  size_t tokens = 0, i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (isalpha(c)) {
      size_t run = 0;
      while (i < n && isalpha(p[i])) {
        run++;
        i++;
      }
      tokens += (run + 3) / 4;
    } else if (c == ' ') {
      i++;
    } else if (c >= 0x80) {
      uint32_t cp;
      size_t k = tt_utf8_decode(p + i, n - i, &cp);
      i += k ? k : 1;
      tokens++;
    } else {
      tokens++; /* digit, punctuation, newline */
      i++;
    }
  }
  return tokens;
}
