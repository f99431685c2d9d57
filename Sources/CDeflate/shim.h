// libdeflate (Debian libdeflate-dev): whole-buffer DEFLATE and gzip, much faster than zlib
// for a document read and written at once. Its functions are not variadic and take plain
// pointers and sizes, so Swift calls them as they are; no shims are needed.
#include <libdeflate.h>
