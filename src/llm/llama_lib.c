/* llama_lib.c — the one function of tabletalk's own in
 * libtabletalk-llama.so, the shared object that carries llama.cpp (its
 * static libraries and the C++ runtime, linked in whole) for the embedded
 * engine; src/llm/llama_api.c loads it on first use. The stamp says what
 * the object was built from, so that the program refuses a stale copy. */
#include "llm/llama_api.h"

void tt_llama_lib_stamp(char *buf, size_t cap) { TT_LLAMA_LIB_STAMP(buf, cap); }
