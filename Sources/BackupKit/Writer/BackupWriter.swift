/// Writes schema 3, deterministically (SPEC §3, §4b canonical bytes).
public enum BackupWriter {
    public static func write(_ document: BackupDocument, pretty: Bool = false) -> [UInt8] {
        []
    }
}
