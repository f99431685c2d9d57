#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Array where Element == UInt8 {
    /// Whether `other` holds these very bytes (false when nil): lengths first, then one
    /// `memcmp`. Every comparison of a backup's encodings goes through here, as `==` on
    /// `[UInt8]` compares element by element (24 M instructions for a 3.4 MB backup) where
    /// `memcmp` compares a vector at a time.
    public func sameBytes(as other: [UInt8]?) -> Bool {
        guard let other, other.count == count else { return false }
        return withUnsafeBytes { mine in
            other.withUnsafeBytes { theirs in
                // Empty arrays may have no base address, and are equal.
                guard let mine = mine.baseAddress, let theirs = theirs.baseAddress else {
                    return true
                }
                return memcmp(mine, theirs, count) == 0
            }
        }
    }
}
