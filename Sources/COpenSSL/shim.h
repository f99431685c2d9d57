// Only what OAuth needs from libcrypto: SHA-256 through the EVP interface (EVP_Digest,
// EVP_sha256) for the PKCE challenge, and RAND_bytes for the verifier and `state`.
// These functions are not variadic, so no wrappers are needed.
#include <openssl/evp.h>
#include <openssl/rand.h>
