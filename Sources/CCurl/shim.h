// Swift cannot call C variadic functions, and libcurl's curl_easy_setopt and
// curl_easy_getinfo are variadic: their third argument's type depends on the option. Each
// wrapper below fixes that type for one kind of option, so Swift calls a typed function
// and the compiler checks the argument. One wrapper per argument kind, not per option.
#include <curl/curl.h>

// Options that take a `long`: booleans, timeouts in ms, HTTP versions, verbosity.
static inline CURLcode cb_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

// Options that take a `curl_off_t`: sizes that may exceed 2 GiB (body size, size cap).
static inline CURLcode cb_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

// Options that take a C string. libcurl copies strings (since 7.17.0), except
// CURLOPT_POSTFIELDS, which the owner keeps alive itself (see CurlEasy).
static inline CURLcode cb_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

// Options that take an opaque pointer libcurl stores without copying: header lists,
// callback user data, the request body, the error buffer.
static inline CURLcode cb_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION share this signature.
static inline CURLcode cb_easy_setopt_write_function(
    CURL *handle, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

// CURLOPT_XFERINFOFUNCTION: progress with 64-bit counters.
static inline CURLcode cb_easy_setopt_xferinfo_function(
    CURL *handle, curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

// CURLINFO_* values of type long (CURLINFO_RESPONSE_CODE).
static inline CURLcode cb_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

// curl_global_init's flags are a macro expression (CURL_GLOBAL_DEFAULT) that Swift does not
// import; this names the call instead.
static inline CURLcode cb_global_init_default(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}
