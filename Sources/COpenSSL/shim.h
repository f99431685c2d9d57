// What the tool needs from libcrypto: SHA-256 and MD5 through the EVP interface (EVP_Digest)
// for PKCE, the merge log and Drive's md5Checksum, RAND_bytes for secrets, and for the age
// envelope (Sources/Envelope) ChaCha20-Poly1305, X25519, HMAC-SHA-256, scrypt
// (EVP_PBE_scrypt) and OPENSSL_cleanse. These functions are not variadic; the two shims
// below only narrow one that takes any pointer.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

// EVP_CIPHER_CTX_ctrl takes a `void *` whose meaning depends on the command: typed shims per
// argument kind, so Swift passes a tag to read into (mutable) or a tag to check (const), and
// never a pointer of the wrong kind or length.
static inline int cloudbackup_aead_get_tag(EVP_CIPHER_CTX *ctx, unsigned char *tag, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, length, tag);
}

static inline int cloudbackup_aead_set_tag(
    EVP_CIPHER_CTX *ctx, const unsigned char *tag, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, length, (void *)tag);
}
