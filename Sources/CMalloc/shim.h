// glibc's allocator controls and statistics (malloc.h), which Swift's Glibc module leaves
// out; `make bench` uses them to start every timed call from the same allocator state.
#include <malloc.h>
