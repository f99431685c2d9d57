import LocalFiles

/// The copies of STATE a restore keeps before writing over it: `STATE.bak` the newest, then
/// `STATE.bak.1`, `.2`, … up to the profile's `previousCopies` (1 unless set), the oldest
/// dropped. One copy by default: four restores used to leave four files, one of them from a
/// restore that changed nothing, and nobody knew which to keep.
struct PreviousCopies {
    let file: String
    let count: Int

    /// The newest copy, where `keep` puts STATE's bytes.
    var newest: String { file + ".bak" }

    /// The allowed range of the profile setting.
    static let range = 1...100

    private func path(_ index: Int) -> String { index == 0 ? newest : "\(newest).\(index)" }

    /// Keeps `bytes` (STATE before the write) as the newest copy, shifting the older ones
    /// down. Bytes the newest copy holds already shift nothing: restoring twice from the same
    /// STATE keeps one copy of it, not two.
    func keep(_ bytes: [UInt8]) throws(LocalFileError) {
        let newestHolds = (try? LocalFile.read(newest, maxBytes: bytes.count)) == bytes
        guard !newestHolds else { return }
        // Oldest first, so no rename lands on a copy not yet moved on.
        for index in stride(from: count - 1, to: 0, by: -1) {
            try LocalFile.move(path(index - 1), to: path(index))
        }
        try LocalFile.writeAtomically(bytes, to: newest, mode: 0o600)
    }
}
