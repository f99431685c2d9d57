/// Reads any supported schema version from untrusted bytes into a validated schema-3
/// document.
public enum BackupReader {
    public static func read(
        _ bytes: UnsafeRawBufferPointer, options: ReadOptions = ReadOptions()
    ) throws(BackupFileError) -> ReadResult {
        throw .notABackup("reader not written yet")
    }

    public static func read(
        _ bytes: [UInt8], options: ReadOptions = ReadOptions()
    ) throws(BackupFileError) -> ReadResult {
        // Array.withUnsafeBytes is untyped `rethrows`, so carry the typed error out by hand.
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(BackupFileError) in try read(buffer, options: options) }
        }
        return try result.get()
    }
}
